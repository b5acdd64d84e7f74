/** Pure: restarts requested while one runs are folded into a single follow-up restart. */

/**
 * Runs `task` for each request, never two at once: requests made while it runs (however many) cause
 * exactly one more run after it, so the last settings always win and no start overlaps another.
 */
export class RestartQueue {
  private running: Promise<void> | undefined;
  private pending: Promise<void> | undefined;

  constructor(private readonly task: () => Promise<void>) {}

  /** Resolves when a run that started after this call has finished (it never rejects). */
  request(): Promise<void> {
    if (this.pending) return this.pending;
    if (!this.running) return (this.running = this.run());
    const after = this.running;
    this.pending = after.then(() => {
      this.pending = undefined;
      return (this.running = this.run());
    });
    return this.pending;
  }

  private async run(): Promise<void> {
    try {
      await this.task();
    } catch {
      // the task reports its own failure (status bar, log); a queue must keep going
    } finally {
      this.running = undefined;
    }
  }
}

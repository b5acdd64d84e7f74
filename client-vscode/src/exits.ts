/** Pure: what the user is told when the server process ends on its own — once, with the exit code and
 * the last lines the server wrote on stderr (where a Python traceback ends with its one useful line). */

/** The server's own log lines below WARNING: what it did, not why it ended. */
const CHATTER = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[,.]\d+ (DEBUG|INFO) /;
const LONGEST = 200;

/** Keeps the last `max` lines of a stream of text chunks (not the server's INFO/DEBUG log lines; each
 * cut to 200 characters). */
export class StderrTail {
  private lines: string[] = [];
  private partial = '';

  constructor(private readonly max = 3) {}

  push(chunk: string): void {
    const parts = (this.partial + chunk).split(/\r?\n/);
    this.partial = parts.pop() ?? '';
    this.lines.push(...parts.filter(l => l.trim() !== '' && !CHATTER.test(l)).map(cut));
    this.lines.splice(0, Math.max(0, this.lines.length - this.max));
  }

  get last(): string[] {
    const partial = this.partial.trim() && !CHATTER.test(this.partial) ? [cut(this.partial)] : [];
    return [...this.lines, ...partial].slice(-this.max);
  }
}

const cut = (line: string) => (line.length > LONGEST ? `${line.slice(0, LONGEST - 1)}…` : line);

/** "the server stopped (exit code 1): <its last stderr lines>" */
export function exitMessage(code: number | null, signal: string | null, tail: string[]): string {
  const how = code !== null ? `exit code ${code}` : signal ? `killed by ${signal}` : 'no exit code';
  const said = tail.map(l => l.trim()).filter(Boolean);
  return `the server stopped (${how})` + (said.length ? `: ${said.join(' · ')}` : '; it wrote nothing on stderr');
}

/** Pure: the words of the client's own messages (the server words its own). */

/** "FlowEdit: …" once: a message that already names FlowEdit is not prefixed again. */
export function flowEditSays(message: string): string {
  return /^FlowEdit\b/.test(message) ? message : `FlowEdit: ${message}`;
}

/** An error reply whose message the server has shown the user already (its `data.shown`). */
export function shownByServer(e: unknown): boolean {
  const data = (e as { data?: unknown } | null)?.data;
  return typeof data === 'object' && data !== null && (data as { shown?: unknown }).shown === true;
}

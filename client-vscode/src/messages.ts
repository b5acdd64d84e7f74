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

/** LSP's MessageType of `window/showMessage`. */
const ERROR = 1, WARNING = 2;

/** How the client shows a server's `window/showMessage`: its severity and buttons. A toast with buttons
 *  shows its whole text (VS Code cuts a toast without buttons to one line, mid-word); a problem with a
 *  setting or an endpoint offers the settings, every warning and error the log. */
export function serverMessage(type: number, message: string): { severity: 'error' | 'warning' | 'info'; buttons: string[] } {
  if (type !== ERROR && type !== WARNING) return { severity: 'info', buttons: [] };
  const buttons = /\b(settings?|endpoint)\b/i.test(message) ? ['Open Settings', 'Show Log'] : ['Show Log'];
  return { severity: type === ERROR ? 'error' : 'warning', buttons };
}

/** Pure: what the status bar shows, folded from `flowedit/status`, `$/progress` and the client's state. */

/** The figures of one request, as the server sends them in `flowedit/status`. */
export interface RequestFigures {
  id: string;
  kind?: string;
  outcome?: string;
  reason?: string;
  ttft_ms?: number;
  tokens?: number;
  tokens_per_s?: number | null;
  first_token_to_first_edit_ms?: number;
  edits_sent?: number;
  edits_applied?: number;
  /** What answered, as the response says (the stand-in and the embedded engine name themselves). */
  model?: string;
  /** The model asked for, when that is not what answered. */
  asked_model?: string;
}

/** A review's figures, as the server sends them in `flowedit/status` (its latest review, in every one). */
export interface ReviewFigures {
  id: string;
  /** reviewing, then finished | interrupted | replaced | failed | closed */
  state?: string;
  /** "reviewing… 2 findings" while it runs, how it ended after */
  message?: string;
  /** Findings shown (so far) */
  findings?: number;
}

/** The `flowedit/status` notification. */
export interface StatusNotification {
  state?: string;
  model?: string;
  endpoint?: string | null;
  /** Why the model endpoint cannot be used, while that is so (state `down`). */
  problem?: string | null;
  request?: RequestFigures | null;
  review?: ReviewFigures | null;
}

export type Connection = 'starting' | 'running' | 'stopped' | 'error';

export interface Status {
  connection: Connection;
  /** The server's link to the model: idle, connecting, connected, reconnecting, down, closed. */
  link?: string;
  /** Why the model endpoint cannot be used (link `down`). */
  problem?: string;
  model?: string;
  endpoint?: string | null;
  error?: string;
  /** Rewrites running now (ids); the Escape key binding is live while this is not empty. */
  running: string[];
  /** Reviews running now (ids); Escape stops them too. */
  reviewing: string[];
  /** What the latest review says: "reviewing… 2 findings", or how it ended. */
  review?: string;
  /** Ids (of rewrites and reviews) that ended before their start was known (the end can overtake the
   *  command's answer). */
  ended: string[];
  liveTokensPerS?: number;
  liveTokens?: number;
  last?: RequestFigures;
}

export const initialStatus: Status = { connection: 'starting', running: [], reviewing: [], ended: [] };

const MAX_ENDED = 32;

/** The client changed state (starting, running, stopped, error with a message). */
export function connectionChanged(s: Status, connection: Connection, error?: string): Status {
  const next: Status = { ...s, connection, error: connection === 'error' ? error : undefined };
  if (connection !== 'running') {
    next.running = [];
    next.reviewing = [];
    next.liveTokensPerS = undefined;
    next.liveTokens = undefined;
  }
  return next;
}

/** `flowedit.rewrite` answered with this id. */
export function rewriteStarted(s: Status, id: string): Status {
  if (s.ended.includes(id)) return { ...s, ended: s.ended.filter(e => e !== id) };
  if (s.running.includes(id)) return s;
  return { ...s, running: [...s.running, id], liveTokensPerS: undefined, liveTokens: undefined };
}

/** `flowedit.review` answered with this id. */
export function reviewStarted(s: Status, id: string): Status {
  if (s.ended.includes(id)) return { ...s, ended: s.ended.filter(e => e !== id) };
  if (s.reviewing.includes(id)) return s;
  return { ...s, reviewing: [...s.reviewing, id] };
}

function ended(s: Status, id: string): Status {
  if (s.reviewing.includes(id)) return { ...s, reviewing: s.reviewing.filter(r => r !== id) };
  if (s.ended.includes(id)) return s;  // (each status repeats the latest review, ended long ago)
  if (s.running.includes(id)) {
    const running = s.running.filter(r => r !== id);
    return { ...s, running, ...(running.length === 0 ? { liveTokensPerS: undefined, liveTokens: undefined } : {}) };
  }
  return { ...s, ended: [...s.ended, id].slice(-MAX_ENDED) };
}

/** Fold one `flowedit/status` notification in. */
export function statusReceived(s: Status, n: StatusNotification): Status {
  let next: Status = { ...s };
  if (typeof n.state === 'string') next.link = n.state;
  if (n.problem !== undefined) next.problem = n.problem ?? undefined;
  if (typeof n.model === 'string') next.model = n.model;
  if (n.endpoint !== undefined) next.endpoint = n.endpoint;
  const rv = n.review;
  if (rv && typeof rv.id === 'string') {
    if (typeof rv.message === 'string') next.review = rv.message;
    next = rv.state === 'reviewing' ? reviewStarted(next, rv.id) : ended(next, rv.id);
  }
  const r = n.request;
  if (r && typeof r.id === 'string') {
    if (typeof r.tokens_per_s === 'number') next.liveTokensPerS = r.tokens_per_s;
    if (typeof r.tokens === 'number') next.liveTokens = r.tokens;
    if (r.outcome) {
      next.last = r;
      next = ended(next, r.id);
    } else if (typeof r.ttft_ms === 'number') {
      next.last = { ...(next.last ?? { id: r.id }), ...r, outcome: undefined };
    }
  }
  return next;
}

/** The progress token the server uses for a rewrite (`flowedit-rw-<n>`), or undefined for others: the index
 * build's (`flowedit-index-<n>`) and a review's (`flowedit-rv-<n>`) are no rewrite the status bar waits for. */
export function rewriteIdOfToken(token: string | number): string | undefined {
  const m = /^flowedit-(rw-.+)$/.exec(String(token));
  return m ? m[1] : undefined;
}

/** "123 tokens, 45 tok/s" → {tokens: 123, tokensPerS: 45}. */
export function parseProgressMessage(message: string | undefined): { tokens?: number; tokensPerS?: number } {
  if (!message) return {};
  const tokens = /(\d+)\s+tokens?\b/.exec(message);
  const rate = /([\d.]+)\s*tok\/s/.exec(message);
  return {
    ...(tokens ? { tokens: Number(tokens[1]) } : {}),
    ...(rate ? { tokensPerS: Number(rate[1]) } : {}),
  };
}

/** Fold one `$/progress` value (begin/report/end) of a server token in. */
export function progressReceived(s: Status, token: string | number,
                                 value: { kind: string; message?: string }): Status {
  const id = rewriteIdOfToken(token);
  if (id === undefined) return s;
  if (value.kind === 'end') return ended(s, id);
  const { tokens, tokensPerS } = parseProgressMessage(value.message);
  let next = s.running.includes(id) || s.ended.includes(id) ? s : rewriteStarted(s, id);
  if (tokens !== undefined) next = { ...next, liveTokens: tokens };
  if (tokensPerS !== undefined) next = { ...next, liveTokensPerS: tokensPerS };
  return next;
}

export interface StatusView {
  text: string;
  tooltip: string;
  severity: 'normal' | 'warning' | 'error';
}

const rate = (v: number) => `${v >= 100 ? Math.round(v) : Math.round(v * 10) / 10} tok/s`;
const tokens = (n: number) => `${n} token${n === 1 ? '' : 's'}`;
const ms = (v: number) => (v >= 1000 ? `${(v / 1000).toFixed(1)} s` : `${Math.round(v)} ms`);

/** The status bar item's text (with codicons), tooltip and colour. */
export function formatStatus(s: Status): StatusView {
  const lines: string[] = [];
  if (s.model) lines.push(`Model: ${s.model}` + (s.last?.asked_model && s.last.model === s.model ? ` (asked for ${s.last.asked_model})` : ''));
  if (s.endpoint) lines.push(`Endpoint: ${s.endpoint}`);
  if (s.link) lines.push(`Connection: ${s.link}`);
  if (s.last) {
    const l = s.last;
    const parts = [l.outcome ? `Last rewrite: ${l.outcome}` : 'Rewrite'];
    if (l.ttft_ms !== undefined) parts.push(`time to first token ${ms(l.ttft_ms)}`);
    if (typeof l.tokens_per_s === 'number') parts.push(rate(l.tokens_per_s));
    if (l.tokens !== undefined) parts.push(tokens(l.tokens));
    if (l.edits_applied !== undefined) {
      const sent = l.edits_sent ?? l.edits_applied;
      parts.push(`${l.edits_applied} of ${sent} edit${sent === 1 ? '' : 's'} applied`);
    }
    lines.push(parts.join(', '));
    if (l.reason) lines.push(l.reason);
  }
  if (s.review) lines.push(`${s.reviewing.length > 0 ? 'Review' : 'Last review'}: ${s.review}`);
  lines.push('Click to show the FlowEdit log');
  const tooltip = (title: string) => [title, ...lines].join('\n');

  switch (s.connection) {
    case 'starting':
      return { text: '$(loading~spin) FlowEdit', tooltip: tooltip('FlowEdit: starting the server…'), severity: 'normal' };
    case 'stopped':
      return { text: '$(circle-slash) FlowEdit', tooltip: tooltip('FlowEdit: server stopped'), severity: 'warning' };
    case 'error':
      return { text: '$(error) FlowEdit', tooltip: tooltip(`FlowEdit: ${s.error ?? 'the server failed'}`), severity: 'error' };
  }
  const bits = ['FlowEdit'];
  if (s.model) bits.push(s.model);
  if (s.running.length > 0) {
    bits.push(s.liveTokensPerS !== undefined ? rate(s.liveTokensPerS)
      : s.liveTokens !== undefined ? tokens(s.liveTokens) : 'waiting for the model');
    return { text: `$(sync~spin) ${bits.join(' · ')}`, tooltip: tooltip('FlowEdit: rewriting (Escape stops it)'), severity: 'normal' };
  }
  if (s.reviewing.length > 0) {
    bits.push(s.review ?? 'reviewing…');
    return { text: `$(sync~spin) ${bits.join(' · ')}`, tooltip: tooltip('FlowEdit: reviewing (Escape stops it)'), severity: 'normal' };
  }
  if (s.link === 'down') {  // no figures of an earlier request beside it: they would read as current
    bits.push('model unreachable');
    return { text: `$(debug-disconnect) ${bits.join(' · ')}`,
             tooltip: tooltip(`FlowEdit: ${s.problem ?? 'the model endpoint cannot be reached'}`), severity: 'error' };
  }
  if (s.last && typeof s.last.tokens_per_s === 'number') bits.push(rate(s.last.tokens_per_s));
  if (s.last?.ttft_ms !== undefined) bits.push(`TTFT ${ms(s.last.ttft_ms)}`);
  const trouble = s.link === 'reconnecting' || s.link === 'closed';
  if (trouble) bits.push(s.link!);
  const icon = trouble ? '$(debug-disconnect)' : s.link === 'connected' ? '$(zap)' : '$(sparkle)';
  return { text: `${icon} ${bits.join(' · ')}`, tooltip: tooltip(`FlowEdit: ${s.link ?? 'ready'}`),
           severity: trouble ? 'warning' : 'normal' };
}

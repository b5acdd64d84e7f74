import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  connectionChanged, formatStatus, initialStatus, parseProgressMessage, progressReceived, rewriteIdOfToken,
  reviewStarted, rewriteStarted, statusReceived, type Status,
} from '../src/status';

const running: Status = connectionChanged(initialStatus, 'running');

test('starting, error and stopped states say so', () => {
  assert.match(formatStatus(initialStatus).text, /loading~spin.*FlowEdit/);
  const failed = formatStatus(connectionChanged(initialStatus, 'error', 'flowedit is not installed'));
  assert.equal(failed.severity, 'error');
  assert.match(failed.tooltip, /flowedit is not installed/);
  assert.equal(formatStatus(connectionChanged(running, 'stopped')).severity, 'warning');
});

test('connection state and model come from flowedit/status', () => {
  const s = statusReceived(running, { state: 'connected', model: 'scripted', endpoint: 'ws://h:1/v1/responses' });
  const view = formatStatus(s);
  assert.equal(view.text, '$(zap) FlowEdit · scripted');
  assert.match(view.tooltip, /Endpoint: ws:\/\/h:1\/v1\/responses/);
  const lost = formatStatus(statusReceived(s, { state: 'reconnecting' }));
  assert.match(lost.text, /reconnecting/);
  assert.equal(lost.severity, 'warning');
});

test('live tok/s while streaming from $/progress, then the last rewrite figures', () => {
  let s = statusReceived(running, { state: 'connected', model: 'm' });
  s = rewriteStarted(s, 'rw-1');
  assert.match(formatStatus(s).text, /sync~spin.*waiting for the model/);
  s = progressReceived(s, 'flowedit-rw-1', { kind: 'begin' });
  s = progressReceived(s, 'flowedit-rw-1', { kind: 'report', message: '17 tokens, 24 tok/s' });
  assert.equal(formatStatus(s).text, '$(sync~spin) FlowEdit · m · 24 tok/s');
  s = statusReceived(s, { state: 'connected', request: { id: 'rw-1', outcome: 'finished', reason: 'done',
    ttft_ms: 152.4, tokens: 40, tokens_per_s: 25.04, edits_sent: 12, edits_applied: 12 } });
  assert.deepEqual(s.running, []);
  const view = formatStatus(s);
  assert.equal(view.text, '$(zap) FlowEdit · m · 25 tok/s · TTFT 152 ms');
  assert.match(view.tooltip, /Last rewrite: finished, time to first token 152 ms, 25 tok\/s, 40 tokens, 12 of 12 edits applied/);
});

test('one token and one edit are singular; the model that answered is named with the one asked for', () => {
  const s = statusReceived(running, { state: 'connected', model: 'scripted stand-in', request: { id: 'rw-9',
    outcome: 'interrupted', reason: 'interrupted by the user', tokens: 1, edits_sent: 1, edits_applied: 1,
    model: 'scripted stand-in', asked_model: 'gpt-5.3-codex-spark' } });
  const view = formatStatus(s);
  assert.match(view.tooltip, /^Model: scripted stand-in \(asked for gpt-5\.3-codex-spark\)$/m);
  assert.match(view.tooltip, /Last rewrite: interrupted, 1 token, 1 of 1 edit applied/);
  assert.doesNotMatch(view.tooltip, /finished|1 tokens|1 edits/);
});

test('an end that overtakes the command answer does not leave the rewrite running', () => {
  let s = statusReceived(running, { request: { id: 'rw-2', outcome: 'failed', reason: 'no endpoint' } });
  s = rewriteStarted(s, 'rw-2');
  assert.deepEqual(s.running, []);
  s = progressReceived(rewriteStarted(s, 'rw-3'), 'flowedit-rw-3', { kind: 'end', message: 'Interrupted: by the user' });
  assert.deepEqual(s.running, []);
});

test('progress of other tokens and a lost connection are handled', () => {
  assert.equal(progressReceived(running, 'other', { kind: 'begin' }), running);
  const s = connectionChanged(rewriteStarted(running, 'rw-4'), 'stopped');
  assert.deepEqual(s.running, []);
  assert.deepEqual(parseProgressMessage('3 tokens'), { tokens: 3 });
  assert.deepEqual(parseProgressMessage('120 tokens, 8.5 tok/s'), { tokens: 120, tokensPerS: 8.5 });
  assert.deepEqual(parseProgressMessage(undefined), {});
});

test('rates and times are rounded for the eye', () => {
  const s = statusReceived(running, { request: { id: 'rw-5', outcome: 'finished', ttft_ms: 1530, tokens_per_s: 312.7 } });
  assert.match(formatStatus(s).text, /313 tok\/s · TTFT 1\.5 s/);
  const slow = statusReceived(running, { request: { id: 'rw-6', outcome: 'finished', tokens_per_s: 7.25, ttft_ms: 3 } });
  assert.match(formatStatus(slow).text, /7\.3 tok\/s · TTFT 3 ms/);
});

test('an endpoint that is down says so in the bar, why in the tooltip, and recovers', () => {
  const down = statusReceived(running, { state: 'down', model: 'gpt', problem: '127.0.0.1 refused the connection' });
  const view = formatStatus(down);
  assert.equal(view.text, '$(debug-disconnect) FlowEdit · gpt · model unreachable');
  assert.equal(view.severity, 'error');
  assert.match(view.tooltip, /refused the connection/);
  const back = formatStatus(statusReceived(down, { state: 'connected', problem: null }));
  assert.equal(back.text, '$(zap) FlowEdit · gpt');
  // an earlier rewrite's figures are not shown beside "unreachable" (they would read as current)
  const earlier = statusReceived(running, { state: 'connected', model: 'gpt',
    request: { id: 'rw-7', outcome: 'finished', ttft_ms: 300, tokens_per_s: 10.2 } });
  const nowDown = formatStatus(statusReceived(earlier, { state: 'down', problem: 'refused' }));
  assert.equal(nowDown.text, '$(debug-disconnect) FlowEdit · gpt · model unreachable');
  assert.match(nowDown.tooltip, /Last rewrite: finished/);  // still in the tooltip, as the last rewrite
});

test("the index build's and a review's progress are no rewrite: the status bar does not wait for the model", () => {
  let s = statusReceived(running, { state: 'connected', model: 'embedded engine' });
  s = progressReceived(s, 'flowedit-index-0', { kind: 'begin', message: 'Indexing the workspace' });
  s = progressReceived(s, 'flowedit-index-0', { kind: 'report', message: 'Indexing: 2 files, 0.0M tokens' });
  s = progressReceived(s, 'flowedit-rv-1', { kind: 'begin', message: 'Reviewing' });
  assert.deepEqual(s.running, []);
  assert.equal(formatStatus(s).text, '$(zap) FlowEdit · embedded engine');
  assert.equal(rewriteIdOfToken('flowedit-rw-4-1'), 'rw-4-1');
});

test('a review runs from its answer or its first status to the status that says it ended; Escape stops it', () => {
  let s = statusReceived(running, { state: 'connected', model: 'm' });
  s = reviewStarted(s, 'rv-1');
  s = statusReceived(s, { review: { id: 'rv-1', state: 'reviewing', message: 'reviewing… 2 findings', findings: 2 } });
  assert.deepEqual(s.reviewing, ['rv-1']);
  assert.deepEqual(s.running, []);  // (no rewrite: redirect and the rewrite's figures are not its)
  const live = formatStatus(s);
  assert.equal(live.text, '$(sync~spin) FlowEdit · m · reviewing… 2 findings');
  assert.match(live.tooltip, /^FlowEdit: reviewing \(Escape stops it\)$/m);
  s = statusReceived(s, { review: { id: 'rv-1', state: 'finished', message: '3 findings', findings: 3 } });
  assert.deepEqual(s.reviewing, []);
  assert.equal(formatStatus(s).text, '$(zap) FlowEdit · m');
  assert.match(formatStatus(s).tooltip, /^Last review: 3 findings$/m);
  // every later status repeats the latest review: it stays ended, and the list of early ends stays short
  for (let i = 0; i < 40; i++) s = statusReceived(s, { review: { id: 'rv-1', state: 'finished' } });
  assert.deepEqual(s.ended.filter(e => e === 'rv-1'), ['rv-1']);
  s = statusReceived(rewriteStarted(s, 'rw-8'), { request: { id: 'rw-8', outcome: 'finished' } });
  assert.deepEqual(s.running, []);
});

test("a review's end that overtakes the command's answer does not leave it running; a lost connection ends it", () => {
  let s = statusReceived(running, { review: { id: 'rv-2', state: 'finished', message: 'no problems found' } });
  s = reviewStarted(s, 'rv-2');
  assert.deepEqual(s.reviewing, []);
  s = connectionChanged(reviewStarted(s, 'rv-3'), 'stopped');
  assert.deepEqual(s.reviewing, []);
});

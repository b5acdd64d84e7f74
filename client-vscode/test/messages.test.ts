import assert from 'node:assert/strict';
import { test } from 'node:test';
import { flowEditSays, serverMessage, shownByServer } from '../src/messages';

test('a message is prefixed with FlowEdit once, never twice', () => {
  assert.equal(flowEditSays('the server stopped (exit code 1)'), 'FlowEdit: the server stopped (exit code 1)');
  assert.equal(flowEditSays('FlowEdit cannot use the model endpoint ws://x: refused'),
               'FlowEdit cannot use the model endpoint ws://x: refused');
  assert.equal(flowEditSays('FlowEdit: select the code first'), 'FlowEdit: select the code first');
  assert.equal(flowEditSays('FlowEditor crashed'), 'FlowEdit: FlowEditor crashed');  // a word of its own
});

test('only an error whose data says so counts as shown by the server', () => {
  assert.equal(shownByServer({ message: 'x', code: -32602, data: { shown: true } }), true);
  for (const e of [new Error('x'), { data: null }, { data: { shown: 'yes' } }, null, undefined, 'text'])
    assert.equal(shownByServer(e), false, String(e));
});

test('server warnings get buttons (a toast with buttons shows its whole text); settings problems open settings', () => {
  assert.deepEqual(serverMessage(2, 'FlowEdit cannot use the model endpoint ws://h/v1/responses: refused'),
                   { severity: 'warning', buttons: ['Open Settings', 'Show Log'] });
  assert.deepEqual(serverMessage(1, 'FlowEdit rewrite stopped: the model stopped early'),
                   { severity: 'error', buttons: ['Show Log'] });
  assert.deepEqual(serverMessage(3, 'FlowEdit: 3 rewrites reverted'), { severity: 'info', buttons: [] });
  assert.deepEqual(serverMessage(4, 'a log line'), { severity: 'info', buttons: [] });
});

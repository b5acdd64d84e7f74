import assert from 'node:assert/strict';
import { test } from 'node:test';
import { flowEditSays, shownByServer } from '../src/messages';

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

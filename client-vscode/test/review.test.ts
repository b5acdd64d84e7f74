import assert from 'node:assert/strict';
import { test } from 'node:test';
import { quietEnd, reviewArgs } from '../src/review';

const range = { start: { line: 2, character: 0 }, end: { line: 5, character: 0 } };
const editor = { uri: 'file:///w/a.py', selection: range };

test('each command asks flowedit.review for its scope; uncommitted changes are the workspace\'s', () => {
  assert.deepEqual(reviewArgs('selection', editor), { uri: 'file:///w/a.py', range, scope: 'selection' });
  assert.deepEqual(reviewArgs('file', editor), { uri: 'file:///w/a.py', scope: 'file' });
  assert.deepEqual(reviewArgs('changes', editor), { scope: 'changes' });
  assert.deepEqual(reviewArgs('changes', undefined), { scope: 'changes' });
});

test('no editor or no selection: why, instead of a request', () => {
  assert.match(reviewArgs('selection', { uri: 'file:///w/a.py' }) as string, /select the code to review/);
  assert.match(reviewArgs('file', undefined) as string, /open a file/);
  assert.match(reviewArgs('selection', undefined) as string, /open a file/);
});

test('a review that finished with nothing to draw says so; findings, a stop or a failure say nothing', () => {
  assert.equal(quietEnd({ id: 'rv-1', state: 'finished', message: 'no uncommitted changes to review', findings: 0 }),
    'FlowEdit review: no uncommitted changes to review');
  assert.equal(quietEnd({ id: 'rv-1', state: 'finished' }), 'FlowEdit review: no problems found');
  assert.equal(quietEnd({ id: 'rv-1', state: 'finished', message: '2 findings', findings: 2 }), undefined);
  assert.equal(quietEnd({ id: 'rv-1', state: 'reviewing', findings: 0 }), undefined);
  assert.equal(quietEnd({ id: 'rv-1', state: 'interrupted', findings: 0 }), undefined);
  assert.equal(quietEnd({ id: 'rv-1', state: 'failed' }), undefined);
});

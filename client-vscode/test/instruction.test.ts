import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openRewrite, presetChoices } from '../src/instruction';

const range = { start: { line: 1, character: 0 }, end: { line: 6, character: 0 } };

test("the lightbulb's 'Rewrite selection…' (no instruction) is asked for one", () => {
  // what the server's code action sends (server.py code_action: instruction None)
  assert.deepEqual(openRewrite('flowedit.rewrite', [{ uri: 'file:///a.py', range, instruction: null }]),
                   { uri: 'file:///a.py', range });
  assert.deepEqual(openRewrite('flowedit.rewrite', [{ uri: 'file:///a.py', range, mode: 'diff' }]),
                   { uri: 'file:///a.py', range, mode: 'diff' });
  assert.deepEqual(openRewrite('flowedit.rewrite', [{ uri: 'file:///a.py', range, instruction: '  ' }]),
                   { uri: 'file:///a.py', range });
});

test('a preset, another command or a malformed argument runs as it is', () => {
  assert.equal(openRewrite('flowedit.rewrite', [{ uri: 'file:///a.py', range, instruction: 'Fix bugs' }]), undefined);
  assert.equal(openRewrite('flowedit.revert', [{ uri: 'file:///a.py' }]), undefined);
  assert.equal(openRewrite('flowedit.rewrite', [{ range }]), undefined);
  assert.equal(openRewrite('flowedit.rewrite', []), undefined);
  assert.equal(openRewrite('flowedit.rewrite', [null]), undefined);
});

test('presets become quick-pick choices that answer their instruction', () => {
  assert.deepEqual(presetChoices([{ title: 'Fix bugs', instruction: 'Fix the bugs.' }]),
                   [{ label: 'Fix bugs', detail: 'Fix the bugs.', value: 'Fix the bugs.' }]);
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NextEdits, shownText, type NextEdit, type NextEditNote, type NextEditPort, type Position } from '../src/nextedit';

interface FakeEditor { uri: string; cursor: Position; drawn: NextEdit[] }

function harness(version = 3) {
  const editor: FakeEditor = { uri: 'file:///a.py', cursor: { line: 0, character: 12 }, drawn: [] };
  const calls: { name: string; argument: object }[] = [];
  const shown: boolean[] = [];
  const traced: string[] = [];
  const port: NextEditPort<FakeEditor> = {
    editorOf: uri => (uri === editor.uri ? editor : undefined),
    versionOf: uri => (uri === editor.uri ? version : undefined),
    draw: (e, edits) => { e.drawn = edits; },
    cursor: e => e.cursor,
    moveCursor: (e, at) => { e.cursor = at; },
    setShown: s => shown.push(s),
    command: async (name, argument) => { calls.push({ name, argument }); return {}; },
    trace: event => traced.push(event),
  };
  return { editor, calls, shown, traced, edits: new NextEdits(port) };
}

const EDIT: NextEdit = { range: { start: { line: 1, character: 11 }, end: { line: 1, character: 16 } }, oldText: 'width', newText: 'size' };
const note = (over: Partial<NextEditNote> = {}): NextEditNote => ({ uri: 'file:///a.py', id: 7, version: 3, edits: [EDIT], ...over });

test('a next edit for the document as it is is drawn and sets the context key; Tab jumps, then applies it', async () => {
  const h = harness();
  h.edits.onNote(note());
  assert.deepEqual(h.editor.drawn, [EDIT]);
  assert.deepEqual(h.shown, [true]);
  assert.equal(await h.edits.tab(), 'jumped');
  assert.deepEqual(h.editor.cursor, EDIT.range.start);
  assert.deepEqual(h.calls, []);  // nothing applied by the jump
  assert.equal(await h.edits.tab(), 'accepted');
  assert.deepEqual(h.calls, [{ name: 'flowedit.acceptNextEdit', argument: { uri: 'file:///a.py', id: 7 } }]);
  assert.deepEqual(h.editor.drawn, []);
  assert.deepEqual(h.shown, [true, false]);
  assert.equal(await h.edits.tab(), 'none');  // Tab is a Tab again (the when-clause no longer holds)
});

test('a note for an older version, or with no edits, draws nothing and clears what was drawn', () => {
  const h = harness(4);
  h.edits.onNote(note({ version: 3 }));  // the user typed since: the server sends a newer one
  assert.deepEqual(h.editor.drawn, []);
  assert.equal(h.edits.current, undefined);
  const fresh = harness();
  fresh.edits.onNote(note());
  fresh.edits.onNote(note({ edits: [], cleared: 'typed over' }));
  assert.deepEqual(fresh.editor.drawn, []);
  assert.deepEqual(fresh.shown, [true, false]);
});

test('Escape dismisses it here and on the server', async () => {
  const h = harness();
  h.edits.onNote(note());
  await h.edits.dismiss();
  assert.deepEqual(h.calls, [{ name: 'flowedit.dismissNextEdit', argument: { uri: 'file:///a.py', id: 7 } }]);
  assert.deepEqual(h.editor.drawn, []);
  await h.edits.dismiss();
  assert.equal(h.calls.length, 1);
});

test('the server hears of the cursor only when its line changes', () => {
  const h = harness();
  assert.equal(h.edits.cursorMoved('file:///a.py', { line: 2, character: 0 }), true);
  assert.equal(h.edits.cursorMoved('file:///a.py', { line: 2, character: 9 }), false);
  assert.equal(h.edits.cursorMoved('file:///a.py', { line: 3, character: 0 }), true);
  h.edits.forget('file:///a.py');
  assert.equal(h.edits.cursorMoved('file:///a.py', { line: 3, character: 0 }), true);
});

test('new text is shown on one line: line breaks as ⏎, a whole new line without a trailing one', () => {
  assert.equal(shownText('size'), 'size');
  assert.equal(shownText('        self.h = h\n'), '        self.h = h');
  assert.equal(shownText('a\nb\r\nc'), 'a ⏎ b ⏎ c');
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TextEdit, WorkspaceEdit } from 'vscode-languageclient';
import {
  HIDDEN_HOLD_MS, RewriteEdits, withRewriteEdits, type EditorPort, type Position, type RewriteEditParams, type Selection,
} from '../src/rewriteedits';

const URI = 'file:///w/app.py';

/** One document of lines in one editor, with VS Code's undo stack: an edit joins the open step unless a
 * stop came before it; the user's typing opens a step of its own (VS Code pushes a stop before a key that
 * follows an edit the cursor did not make). */
class FakeVsCode implements EditorPort<string> {
  lines: string[];
  version = 1;
  visible = true;
  selection: Selection;
  steps: string[][] = [];  // undo steps, each the texts of its edits
  stopsBefore: boolean[] = [];
  workspaceEdits = 0;
  private open = false;  // the last step can still be joined

  constructor(text: string, selection: Selection) {
    this.lines = text.split('\n');
    this.selection = selection;
  }

  get text(): string { return this.lines.join('\n'); }

  editorOf(uri: string) { return uri === URI && this.visible ? 'editor-1' : undefined; }
  versionOf(uri: string) { return uri === URI ? this.version : undefined; }

  async edit(_editor: string, edits: TextEdit[], undoStopBefore: boolean): Promise<boolean> {
    this.stopsBefore.push(undoStopBefore);
    if (undoStopBefore || !this.open) this.steps.push([]);
    this.steps[this.steps.length - 1].push(...edits.map(e => e.newText));
    this.open = true;  // undoStopAfter is always false
    for (const e of edits) this.replace(e);
    this.version++;
    return true;
  }

  async workspaceEdit(edit: WorkspaceEdit) {
    return async () => {
      this.workspaceEdits++;
      for (const change of edit.documentChanges ?? []) if ('edits' in change) for (const e of change.edits) this.replace(e as TextEdit);
      this.version++;
      return true;
    };
  }

  selectionOf() { return this.selection; }
  setCursor(_editor: string, at: Position) { this.selection = { anchor: at, active: at }; }

  waits: number[] = [];  // each whenVisible's ms
  private waiting: ((e: string | undefined) => void)[] = [];
  whenVisible(uri: string, ms: number): Promise<string | undefined> {
    this.waits.push(ms);
    if (this.editorOf(uri)) return Promise.resolve(this.editorOf(uri));
    return new Promise(resolve => this.waiting.push(resolve));
  }
  /** The user comes back to the tab (true) or the hold runs out (false). */
  show(again: boolean): void {
    this.visible = again;
    for (const resolve of this.waiting.splice(0)) resolve(again ? 'editor-2' : undefined);
  }

  /** The user types `text` at the start of line `line`. */
  type(line: number, text: string): void {
    this.lines[line] = text + this.lines[line];
    this.steps.push([`user:${text}`]);
    this.open = true;
    this.version++;
  }

  private replace(e: TextEdit): void {
    const { start, end } = e.range;
    const head = this.lines.slice(0, start.line).join('\n') + (start.line ? '\n' : '') + this.lines[start.line].slice(0, start.character);
    const tail = this.lines[end.line].slice(end.character) + (end.line + 1 < this.lines.length ? '\n' : '') + this.lines.slice(end.line + 1).join('\n');
    this.lines = (head + e.newText + tail).split('\n');
  }
}

const at = (line: number, character: number): Position => ({ line, character });
const sel = (a: Position, b: Position): Selection => ({ anchor: a, active: b });

function edit(rewrite: string, version: number | null, line: number, from: number, to: number, text: string): RewriteEditParams {
  return {
    rewrite, label: 'FlowEdit rewrite',
    edit: { documentChanges: [{ textDocument: { uri: URI, version },
      edits: [{ range: { start: at(line, from), end: at(line, to) }, newText: text }] }] },
  };
}

test('the edits of one rewrite are one undo step: a stop before the first only', async () => {
  const vs = new FakeVsCode('a = 1\nb = 2', sel(at(0, 0), at(0, 5)));
  const edits = new RewriteEdits(vs);
  assert.deepEqual(await edits.apply(edit('rw-1', 1, 0, 0, 5, 'x')), { applied: true });
  assert.deepEqual(await edits.apply(edit('rw-1', 2, 0, 1, 1, 'yz')), { applied: true });
  assert.deepEqual(await edits.apply(edit('rw-1', 3, 0, 3, 3, '!')), { applied: true });
  assert.equal(vs.text, 'xyz!\nb = 2');
  assert.deepEqual(vs.stopsBefore, [true, false, false]);
  assert.deepEqual(vs.steps, [['x', 'yz', '!']]);
});

test('typing between two edits of a rewrite: no undo step holds both the rewrite and the keys', async () => {
  const vs = new FakeVsCode('a = 1\nb = 2', sel(at(0, 0), at(0, 5)));
  const edits = new RewriteEdits(vs);
  await edits.apply(edit('rw-1', 1, 0, 0, 5, 'x'));
  vs.type(1, '#');
  await edits.apply(edit('rw-1', 3, 0, 1, 1, 'y'));
  await edits.apply(edit('rw-1', 4, 0, 2, 2, 'z'));
  assert.deepEqual(vs.stopsBefore, [true, true, false]);
  assert.deepEqual(vs.steps, [['x'], ['user:#'], ['y', 'z']]);
});

test('another rewrite between two edits of one also ends its step', async () => {
  const vs = new FakeVsCode('a = 1\nb = 2', sel(at(0, 0), at(0, 0)));
  const edits = new RewriteEdits(vs);
  await edits.apply(edit('rw-1', 1, 0, 0, 1, 'A'));
  await edits.apply(edit('rw-2', 2, 1, 0, 1, 'B'));
  await edits.apply(edit('rw-1', 3, 0, 1, 1, 'a'));
  assert.deepEqual(vs.stopsBefore, [true, true, true]);
});

test('an edit for another version than the document\'s is refused without touching it', async () => {
  const vs = new FakeVsCode('a = 1', sel(at(0, 0), at(0, 0)));
  const edits = new RewriteEdits(vs);
  vs.type(0, '#');
  assert.deepEqual(await edits.apply(edit('rw-1', 1, 0, 0, 1, 'x')), { applied: false });
  assert.equal(vs.text, '#a = 1');
  assert.deepEqual(vs.stopsBefore, []);
  // version null skips the check, as in workspace/applyEdit
  assert.deepEqual(await edits.apply(edit('rw-1', null, 0, 0, 1, 'x')), { applied: true });
  assert.equal(vs.text, 'xa = 1');
});

test('a document in no visible editor gets workspace.applyEdit, with the same version check', async () => {
  const vs = new FakeVsCode('a = 1', sel(at(0, 0), at(0, 0)));
  vs.visible = false;
  const edits = new RewriteEdits(vs);
  assert.deepEqual(await edits.apply(edit('rw-1', 1, 0, 0, 1, 'x')), { applied: true });
  assert.deepEqual(await edits.apply(edit('rw-1', 1, 0, 0, 1, 'y')), { applied: false });
  assert.equal(vs.workspaceEdits, 1);
  assert.equal(vs.text, 'x = 1');
});

test('an editor hidden mid-stream: the next edit waits for it and joins the rewrite\'s undo step', async () => {
  const vs = new FakeVsCode('a = 1\nb = 2', sel(at(0, 0), at(0, 5)));
  const edits = new RewriteEdits(vs);
  await edits.apply(edit('rw-1', 1, 0, 0, 5, 'x'));
  vs.visible = false;  // the user went to another tab
  const held = edits.apply(edit('rw-1', 2, 0, 1, 1, 'yz'));
  await new Promise(r => setImmediate(r));
  assert.equal(vs.text, 'x\nb = 2');  // nothing yet: it waits
  assert.deepEqual(vs.waits, [HIDDEN_HOLD_MS]);
  vs.show(true);
  assert.deepEqual(await held, { applied: true });
  assert.deepEqual(await edits.apply(edit('rw-1', 3, 0, 3, 3, '!')), { applied: true });
  assert.equal(vs.text, 'xyz!\nb = 2');
  assert.deepEqual(vs.steps, [['x', 'yz', '!']]);  // one Ctrl+Z takes the whole rewrite back
  assert.equal(vs.workspaceEdits, 0);
});

test('an editor hidden for longer than the hold: the edits go on through workspace.applyEdit, without waiting again', async () => {
  const vs = new FakeVsCode('a = 1\nb = 2', sel(at(0, 0), at(0, 5)));
  const edits = new RewriteEdits(vs);
  await edits.apply(edit('rw-1', 1, 0, 0, 5, 'x'));
  vs.visible = false;
  const held = edits.apply(edit('rw-1', 2, 0, 1, 1, 'y'));
  await new Promise(r => setImmediate(r));
  vs.show(false);  // HIDDEN_HOLD_MS went by
  assert.deepEqual(await held, { applied: true });
  assert.deepEqual(await edits.apply(edit('rw-1', 3, 0, 2, 2, 'z')), { applied: true });
  assert.equal(vs.text, 'xyz\nb = 2');
  assert.equal(vs.workspaceEdits, 2);
  assert.deepEqual(vs.waits, [HIDDEN_HOLD_MS]);  // the second edit did not wait
});

test('when the rewrite ends, the streamed block is unselected, the cursor at its end', async () => {
  const vs = new FakeVsCode('a = 1\nb = 2', sel(at(0, 0), at(1, 0)));
  const edits = new RewriteEdits(vs);
  await edits.apply(edit('rw-1', 1, 0, 0, 5, 'longer = 1'));
  vs.selection = sel(at(0, 0), at(1, 0));  // VS Code grew the selection over the block
  edits.ended('rw-1');
  assert.deepEqual(vs.selection, sel(at(1, 0), at(1, 0)));
  // selected upwards: the end is the anchor
  const up = new FakeVsCode('a = 1\nb = 2', sel(at(1, 0), at(0, 0)));
  const upEdits = new RewriteEdits(up);
  await upEdits.apply(edit('rw-2', 1, 0, 0, 5, 'x'));
  upEdits.ended('rw-2');
  assert.deepEqual(up.selection, sel(at(1, 0), at(1, 0)));
});

test('a selection or text the user changed since the last edit is left as it is at the end', async () => {
  const vs = new FakeVsCode('a = 1\nb = 2', sel(at(0, 0), at(1, 0)));
  const edits = new RewriteEdits(vs);
  await edits.apply(edit('rw-1', 1, 0, 0, 5, 'x'));
  vs.selection = sel(at(1, 1), at(1, 3));  // the user selected something else
  edits.ended('rw-1');
  assert.deepEqual(vs.selection, sel(at(1, 1), at(1, 3)));

  const typed = new FakeVsCode('a = 1\nb = 2', sel(at(0, 0), at(1, 0)));
  const typedEdits = new RewriteEdits(typed);
  await typedEdits.apply(edit('rw-2', 1, 0, 0, 5, 'x'));
  typed.type(1, '#');
  typedEdits.ended('rw-2');
  assert.deepEqual(typed.selection, sel(at(0, 0), at(1, 0)));
  typedEdits.ended('rw-unknown');  // a rewrite that never edited here: nothing to do

  const hidden = new FakeVsCode('a = 1\nb = 2', sel(at(0, 0), at(1, 0)));
  const hiddenEdits = new RewriteEdits(hidden);
  await hiddenEdits.apply(edit('rw-3', 1, 0, 0, 5, 'x'));
  hidden.visible = false;  // its editor was closed or is behind another tab
  hiddenEdits.ended('rw-3');
  assert.deepEqual(hidden.selection, sel(at(0, 0), at(1, 0)));
});

test('the capability is added to the experimental ones already declared', () => {
  assert.deepEqual(withRewriteEdits(undefined), { flowedit: { rewriteEdits: true } });
  assert.deepEqual(withRewriteEdits({ other: 1, flowedit: { x: 2 } }), { other: 1, flowedit: { x: 2, rewriteEdits: true } });
});

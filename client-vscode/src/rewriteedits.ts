/**
 * Pure: the server's `flowedit/applyRewriteEdit` — the edits of one rewrite, applied so that the whole
 * rewrite is one undo step (one Ctrl+Z takes it back, one redo puts it back), and the streamed block left
 * unselected when the rewrite ends. VS Code itself is reached through an `EditorPort`.
 *
 * Every `workspace/applyEdit` is its own undo step in VS Code; `TextEditor.edit` can join steps. So the
 * first edit of a rewrite opens a step (`undoStopBefore`), the next ones join it, and none closes it
 * (`undoStopAfter: false`). A change by anyone else between two of the rewrite's edits (the user typing)
 * makes the next edit open a new step. The other way round, VS Code pushes an undo stop before a keystroke
 * that follows an edit the cursor did not make, so the user's typing never joins the rewrite's step.
 *
 * `TextEditor.edit` is version-safe: VS Code refuses it when the document moved on since the call. The
 * version the server named is checked here first, as vscode-languageclient does for workspace/applyEdit.
 *
 * A document in no visible editor can only take `workspace.applyEdit`, each its own undo step. So when the
 * user hides a rewrite's editor mid-stream (another tab), its next edit waits for the editor to show again
 * (up to `HIDDEN_HOLD_MS`; the server coalesces what streams meanwhile into it) and then joins the step.
 */

import type {
  ApplyWorkspaceEditParams, ApplyWorkspaceEditResult, TextDocumentEdit, TextEdit, WorkspaceEdit,
} from 'vscode-languageclient';

export const APPLY_REWRITE_EDIT = 'flowedit/applyRewriteEdit';

/** `capabilities.experimental.flowedit` in initialize: the server then sends a rewrite's edits as
 * `flowedit/applyRewriteEdit` instead of `workspace/applyEdit`. */
export const REWRITE_EDITS_CAPABILITY = { rewriteEdits: true } as const;

/** The client's experimental capabilities with ours added (whatever else is there stays). */
export function withRewriteEdits(experimental: unknown): Record<string, unknown> {
  const others = experimental && typeof experimental === 'object' ? experimental as Record<string, unknown> : {};
  return { ...others, flowedit: { ...(others.flowedit as object | undefined), ...REWRITE_EDITS_CAPABILITY } };
}

/** workspace/applyEdit's params plus the id of the rewrite the edit belongs to. */
export interface RewriteEditParams extends ApplyWorkspaceEditParams {
  rewrite: string;
}

export interface Position {
  line: number;
  character: number;
}

export interface Selection {
  anchor: Position;
  active: Position;
}

/** What of VS Code the rewrite edits use; `E` is a text editor. URIs are the server's. */
export interface EditorPort<E> {
  /** The editor showing `uri` (the active one first), or undefined when none is visible. */
  editorOf(uri: string): E | undefined;
  /** The version of the open document `uri`; undefined when it is not open. */
  versionOf(uri: string): number | undefined;
  /** `TextEditor.edit` of `edits` with these undo stops (never one after); whether VS Code applied it. */
  edit(editor: E, edits: TextEdit[], undoStopBefore: boolean): Thenable<boolean>;
  /** Converts `edit`; the function returned applies it (`workspace.applyEdit`) and awaits nothing before. */
  workspaceEdit(edit: WorkspaceEdit): Promise<() => Thenable<boolean>>;
  selectionOf(editor: E): Selection;
  setCursor(editor: E, at: Position): void;
  /** The editor showing `uri` once one is visible (now, or later); undefined after `ms` or if the
   * document is closed first. */
  whenVisible(uri: string, ms: number): Promise<E | undefined>;
}

interface Group<E> {
  uri: string;
  /** The editor the last edit went through. */
  editor: E;
  /** The document's version just after the rewrite's last edit (an edit moves it by one). */
  version: number;
  /** The editor's selection just after that edit. */
  selection: Selection;
  /** Its editor stayed hidden for `HIDDEN_HOLD_MS` once: its edits no longer wait for it. */
  gaveUp?: boolean;
}

const MAX_GROUPS = 32;

/** How long an edit of a rewrite whose editor was hidden waits for it to show again: well under the
 * server's 30 s wait for an answer; after that the rewrite's edits go through `workspace.applyEdit`. */
export const HIDDEN_HOLD_MS = 20000;

const samePosition = (a: Position, b: Position) => a.line === b.line && a.character === b.character;
const before = (a: Position, b: Position) => a.line < b.line || (a.line === b.line && a.character < b.character);
const isTextDocumentEdit = (c: unknown): c is TextDocumentEdit =>
  !!c && typeof c === 'object' && 'textDocument' in c && Array.isArray((c as TextDocumentEdit).edits);
/** One document's plain text edits (a snippet edit is left to workspace.applyEdit). */
const plainEdits = (c: TextDocumentEdit): TextEdit[] | undefined =>
  c.edits.every(e => typeof (e as TextEdit).newText === 'string') ? c.edits as TextEdit[] : undefined;

export class RewriteEdits<E> {
  /** The rewrites that have edited an editor, by id, oldest first. */
  private readonly groups = new Map<string, Group<E>>();

  constructor(private readonly port: EditorPort<E>) {}

  /** Handle `flowedit/applyRewriteEdit`; the answer is workspace/applyEdit's. */
  async apply(params: RewriteEditParams): Promise<ApplyWorkspaceEditResult> {
    const changes = params.edit.documentChanges ?? [];
    const only = changes.length === 1 && isTextDocumentEdit(changes[0]) ? changes[0] : undefined;
    const edits = only && plainEdits(only);
    let editor = only && edits && this.port.editorOf(only.textDocument.uri);
    const last = this.groups.get(params.rewrite);
    if (only && edits && editor === undefined && last && last.uri === only.textDocument.uri && !last.gaveUp) {
      editor = await this.port.whenVisible(last.uri, HIDDEN_HOLD_MS);  // hidden mid-stream: wait for it
      if (editor === undefined) last.gaveUp = true;
      if (this.port.versionOf(last.uri) === undefined) return { applied: false, failureReason: 'the document was closed' };
    }
    if (!only || !edits || editor === undefined) return this.applyElsewhere(params.edit);  // no editor: no step to join
    const { uri, version } = only.textDocument;
    const current = this.port.versionOf(uri);
    if (current === undefined || (version !== null && version !== current)) return { applied: false };
    // undo is per document: another editor of the same document joins the same step
    const undoStopBefore = !(last && last.uri === uri && last.version === current);
    let applied: boolean;
    try {
      applied = await this.port.edit(editor, edits, undoStopBefore);
    } catch (e) {  // the editor was closed meanwhile
      return { applied: false, failureReason: e instanceof Error ? e.message : String(e) };
    }
    if (applied) {
      this.remember(params.rewrite, { uri, editor, version: current + 1, selection: this.port.selectionOf(editor),
                                      gaveUp: last?.gaveUp });
    }
    return { applied };
  }

  /**
   * Rewrite `id` ended: when its last edit left the streamed block selected and nothing changed since
   * (neither the text nor the selection), the cursor goes to the end of the block, unselected — so that
   * the next key does not replace the rewrite.
   */
  ended(id: string): void {
    const group = this.groups.get(id);
    this.groups.delete(id);
    if (!group || this.port.editorOf(group.uri) !== group.editor) return;  // closed or hidden since
    const now = this.port.selectionOf(group.editor);
    const { anchor, active } = group.selection;
    if (samePosition(anchor, active) || this.port.versionOf(group.uri) !== group.version) return;
    if (!samePosition(now.anchor, anchor) || !samePosition(now.active, active)) return;
    this.port.setCursor(group.editor, before(anchor, active) ? active : anchor);
  }

  /** A document not in any visible editor: `workspace.applyEdit`, with the same version check. */
  private async applyElsewhere(edit: WorkspaceEdit): Promise<ApplyWorkspaceEditResult> {
    const applyNow = await this.port.workspaceEdit(edit);
    for (const change of edit.documentChanges ?? []) {
      if (!isTextDocumentEdit(change) || change.textDocument.version === null) continue;
      const current = this.port.versionOf(change.textDocument.uri);
      if (current !== undefined && current !== change.textDocument.version) return { applied: false };
    }
    return { applied: await applyNow() };
  }

  private remember(id: string, group: Group<E>): void {
    this.groups.delete(id);
    this.groups.set(id, group);
    for (const old of this.groups.keys()) {
      if (this.groups.size <= MAX_GROUPS) break;
      this.groups.delete(old);  // the end of a rewrite was never heard of (a server that stopped)
    }
  }
}

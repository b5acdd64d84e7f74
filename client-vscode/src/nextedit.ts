/**
 * Pure: the server's next-edit suggestions (`flowedit/nextEdit`) in VS Code. VS Code shows an inline
 * completion only on the cursor's line, and its own inline-edit rendering is a proposed API a published
 * extension cannot use: so the edit is drawn here with decorations (the text it replaces struck through,
 * the new text after it), Tab moves the cursor to it and Tab again applies it (`flowedit.acceptNextEdit`,
 * a versioned edit from the server), Escape dismisses it. package.json's when-clauses keep today's keys:
 * Tab is ours only while a next edit is shown and no inline suggestion or suggest widget is, Escape only
 * while no rewrite streams (Escape interrupts it) and no inline suggestion is shown (Escape hides that
 * first). The cursor's line goes to the server as `flowedit/cursor` when it changes: leaving the edited
 * line predicts at once. VS Code itself is reached through a `NextEditPort`.
 */

export const NEXT_EDIT_NOTIFICATION = 'flowedit/nextEdit';
export const CURSOR_NOTIFICATION = 'flowedit/cursor';
export const SHOWN_KEY = 'flowedit.nextEditShown';

export interface Position { line: number; character: number }
export interface Range { start: Position; end: Position }
export interface NextEdit { range: Range; oldText: string; newText: string }

/** `flowedit/nextEdit`: a prediction for `uri` (edits in its version `version`), or `edits: []` + `cleared`. */
export interface NextEditNote {
  uri: string;
  id: number;
  version?: number;
  edits: NextEdit[];
  cleared?: string;
  ms?: number;
}

/** What of VS Code the next edits use; `E` is a text editor. URIs are the server's. */
export interface NextEditPort<E> {
  /** The editor showing `uri`, if one is visible. */
  editorOf(uri: string): E | undefined;
  /** The version of the open document `uri`. */
  versionOf(uri: string): number | undefined;
  /** Draw `edits` in `editor` (replacing what was drawn there), or nothing when `edits` is empty. */
  draw(editor: E, edits: NextEdit[]): void;
  cursor(editor: E): Position;
  /** Put the cursor at `at` and scroll it into view. */
  moveCursor(editor: E, at: Position): void;
  /** The `flowedit.nextEditShown` context key of the when-clauses. */
  setShown(shown: boolean): void;
  command(name: string, argument: object): Promise<unknown>;
  trace(event: string, data: object): void;
}

/** The text shown after the replaced range: line breaks as ⏎ (a decoration's text is one line). */
export function shownText(newText: string): string {
  return newText.replace(/\r?\n$/, '').replace(/\r?\n/g, ' ⏎ ');
}

export class NextEdits<E> {
  private shown: { note: NextEditNote; editor: E } | undefined;
  private cursorLines = new Map<string, number>();

  constructor(private readonly port: NextEditPort<E>) {}

  /** The prediction shown now, if any. */
  get current(): NextEditNote | undefined {
    return this.shown?.note;
  }

  /** A `flowedit/nextEdit` arrived: draw it (for the document as it is now only), or clear. */
  onNote(note: NextEditNote): void {
    const editor = this.port.editorOf(note.uri);
    const current = note.version === undefined || this.port.versionOf(note.uri) === note.version;
    if (this.shown && (this.shown.note.uri === note.uri || note.edits.length > 0)) this.clear();
    if (!editor || !current || note.edits.length === 0) {
      this.port.trace('nextEdit', { uri: note.uri, id: note.id, shown: false, cleared: note.cleared ?? (current ? null : 'stale') });
      return;
    }
    this.port.draw(editor, note.edits);
    this.shown = { note, editor };
    this.port.setShown(true);
    this.port.trace('nextEdit', { uri: note.uri, id: note.id, shown: true, edits: note.edits, ms: note.ms });
  }

  /** Tab: to the prediction's first edit when the cursor is on another line, else apply it. */
  async tab(): Promise<'jumped' | 'accepted' | 'none'> {
    const shown = this.shown;
    if (!shown) return 'none';
    const first = shown.note.edits[0].range.start;
    if (this.port.cursor(shown.editor).line !== first.line) {
      this.port.moveCursor(shown.editor, first);
      this.port.trace('nextEditJump', { line: first.line, character: first.character });
      return 'jumped';
    }
    this.clear();
    await this.port.command('flowedit.acceptNextEdit', { uri: shown.note.uri, id: shown.note.id });
    return 'accepted';
  }

  /** Escape: the prediction goes away, here and on the server. */
  async dismiss(): Promise<void> {
    const shown = this.shown;
    if (!shown) return;
    this.clear();
    await this.port.command('flowedit.dismissNextEdit', { uri: shown.note.uri, id: shown.note.id });
  }

  /** The cursor of `uri` moved to `at`: whether to tell the server (its line changed). */
  cursorMoved(uri: string, at: Position): boolean {
    if (this.cursorLines.get(uri) === at.line) return false;
    this.cursorLines.set(uri, at.line);
    return true;
  }

  /** The document closed or the server went: nothing of it stays drawn. */
  forget(uri?: string): void {
    if (uri === undefined || this.shown?.note.uri === uri) this.clear();
    if (uri === undefined) this.cursorLines.clear();
    else this.cursorLines.delete(uri);
  }

  private clear(): void {
    if (!this.shown) return;
    this.port.draw(this.shown.editor, []);
    this.shown = undefined;
    this.port.setShown(false);
  }
}

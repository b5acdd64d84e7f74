/** The one module that calls `vscode.*` at run time; everything else takes its types or goes through here. */

import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { PROTECTED_KEYS, userScoped } from './settings';

export type Disposable = vscode.Disposable;
export type TextEditor = vscode.TextEditor;
export type TextDocument = vscode.TextDocument;
export type ExtensionContext = vscode.ExtensionContext;

const SECTION = 'flowedit';

/** The remote this window works in (e.g. "ssh-remote"), undefined in a local window. */
export function remoteName(): string | undefined {
  return vscode.env.remoteName;
}

/** Reads `flowedit.<key>`; a protected one (where the key goes, what runs) from the user's settings only. */
export function setting(key: string): unknown {
  const config = vscode.workspace.getConfiguration(SECTION);
  return PROTECTED_KEYS.includes(key) ? userScoped(config.inspect(key)) : config.get(key);
}

export function onSettingsChanged(listener: (affects: (section: string) => boolean) => void): Disposable {
  return vscode.workspace.onDidChangeConfiguration(e => listener(s => e.affectsConfiguration(s)));
}

export function registerCommand(id: string, run: (...args: any[]) => unknown): Disposable {
  return vscode.commands.registerCommand(id, run);
}

export function executeCommand<T = unknown>(id: string, ...args: unknown[]): Thenable<T> {
  return vscode.commands.executeCommand<T>(id, ...args);
}

export function setContext(key: string, value: unknown): void {
  void vscode.commands.executeCommand('setContext', key, value);
}

export function createOutputChannel(name: string): vscode.LogOutputChannel {
  return vscode.window.createOutputChannel(name, { log: true });
}

export function activeEditor(): vscode.TextEditor | undefined {
  return vscode.window.activeTextEditor;
}

/** The editor showing the document `uri` (the active one first), if one is visible. */
export function visibleEditor(uri: string): vscode.TextEditor | undefined {
  const active = vscode.window.activeTextEditor;
  if (active?.document.uri.toString() === uri) return active;
  return vscode.window.visibleTextEditors.find(e => e.document.uri.toString() === uri);
}

/** The editor showing `uri` as soon as one is visible; undefined after `ms`, or when the document closes. */
export function whenVisible(uri: string, ms: number): Promise<vscode.TextEditor | undefined> {
  const now = visibleEditor(uri);
  if (now) return Promise.resolve(now);
  return new Promise(resolve => {
    const subscriptions: vscode.Disposable[] = [];
    const done = (editor: vscode.TextEditor | undefined) => {
      clearTimeout(timer);
      for (const s of subscriptions) s.dispose();
      resolve(editor);
    };
    const timer = setTimeout(() => done(undefined), ms);
    subscriptions.push(
      vscode.window.onDidChangeVisibleTextEditors(() => { const e = visibleEditor(uri); if (e) done(e); }),
      vscode.workspace.onDidCloseTextDocument(d => { if (d.uri.toString() === uri) done(undefined); }));
  });
}

/** The interpreter the Python extension (ms-python.python) has selected, if it is installed and says. */
export async function pythonExtensionInterpreter(): Promise<string | undefined> {
  const ext = vscode.extensions.getExtension('ms-python.python');
  if (!ext) return undefined;
  try {
    const exports: any = ext.isActive ? ext.exports : await ext.activate();
    const active = exports?.environments?.getActiveEnvironmentPath?.();
    const path = typeof active?.path === 'string' ? active.path : undefined;
    return path && path !== 'python' ? path : undefined;  // 'python': it found none and guesses
  } catch {
    return undefined;
  }
}

export function openDocument(uri: string): vscode.TextDocument | undefined {
  return vscode.workspace.textDocuments.find(d => d.uri.toString() === uri);
}

/** `TextEditor.edit`: replaces each range (no undo stop after, one before if asked); whether it was applied. */
export function editInEditor(editor: vscode.TextEditor, edits: { range: vscode.Range; text: string }[],
                             undoStopBefore: boolean): Thenable<boolean> {
  return editor.edit(b => { for (const e of edits) b.replace(e.range, e.text); }, { undoStopBefore, undoStopAfter: false });
}

export function applyWorkspaceEdit(edit: vscode.WorkspaceEdit): Thenable<boolean> {
  return vscode.workspace.applyEdit(edit);
}

type Position = { line: number; character: number };
type Range = { start: Position; end: Position };

export function selectionOf(editor: vscode.TextEditor): { anchor: Position; active: Position } {
  const { anchor, active } = editor.selection;
  return { anchor: { line: anchor.line, character: anchor.character },
           active: { line: active.line, character: active.character } };
}

export function setCursor(editor: vscode.TextEditor, at: Position): void {
  editor.selection = new vscode.Selection(at.line, at.character, at.line, at.character);
}

export function onDocumentChanged(listener: (e: vscode.TextDocumentChangeEvent) => void): Disposable {
  return vscode.workspace.onDidChangeTextDocument(listener);
}

/** FlowEdit's diagnostics (source flowedit) of each document whose diagnostics change: 0-based lines, message. */
export function onFindingsChanged(
  listener: (uri: string, findings: { line: number; endLine: number; message: string }[]) => void): Disposable {
  return vscode.languages.onDidChangeDiagnostics(e => {
    for (const uri of e.uris) {
      listener(uri.toString(), vscode.languages.getDiagnostics(uri).filter(d => d.source === 'flowedit')
        .map(d => ({ line: d.range.start.line, endLine: d.range.end.line, message: d.message })));
    }
  });
}

export function showError(message: string, ...buttons: string[]): Thenable<string | undefined> {
  return vscode.window.showErrorMessage(message, ...buttons);
}

export function showWarning(message: string, ...buttons: string[]): Thenable<string | undefined> {
  return vscode.window.showWarningMessage(message, ...buttons);
}

export function showInfo(message: string, ...buttons: string[]): Thenable<string | undefined> {
  return vscode.window.showInformationMessage(message, ...buttons);
}

export function copyToClipboard(text: string): Thenable<void> {
  return vscode.env.clipboard.writeText(text);
}

export function askText(prompt: string, options: { password?: boolean; placeHolder?: string; value?: string } = {}):
    Thenable<string | undefined> {
  return vscode.window.showInputBox({ prompt, ignoreFocusOut: true, ...options });
}

export interface Choice {
  label: string;
  detail?: string;
  /** What is answered when this choice is taken. */
  value: string;
}

/**
 * A quick pick of `choices` that also takes free text: whatever is typed becomes the first entry.
 * Resolves to the chosen value, or undefined when dismissed.
 */
export function pickOrType(title: string, placeholder: string, choices: Choice[], typedLabel: (t: string) => string):
    Promise<string | undefined> {
  return new Promise(resolve => {
    const qp = vscode.window.createQuickPick<vscode.QuickPickItem & { value: string }>();
    const base = choices.map(c => ({ label: c.label, detail: c.detail, value: c.value }));
    qp.title = title;
    qp.placeholder = placeholder;
    qp.matchOnDetail = true;
    qp.items = base;
    let done = false;
    const finish = (v: string | undefined) => { if (!done) { done = true; resolve(v); qp.dispose(); } };
    qp.onDidChangeValue(v => {
      const t = v.trim();
      qp.items = t ? [{ label: typedLabel(t), value: t, alwaysShow: true }, ...base] : base;
    });
    qp.onDidAccept(() => {
      const picked = qp.selectedItems[0] ?? qp.activeItems[0];
      finish(picked ? picked.value : qp.value.trim() || undefined);
    });
    qp.onDidHide(() => finish(undefined));
    qp.show();
  });
}

export type Severity = 'normal' | 'warning' | 'error';

/** The status bar item; `show` updates it. */
export function createStatusItem(id: string, name: string, command: string) {
  const item = vscode.window.createStatusBarItem(id, vscode.StatusBarAlignment.Right, 100);
  item.name = name;
  item.command = command;
  item.show();
  return {
    show(text: string, tooltip: string, severity: Severity) {
      item.text = text;
      item.tooltip = tooltip;
      item.backgroundColor = severity === 'normal' ? undefined
        : new vscode.ThemeColor(severity === 'error' ? 'statusBarItem.errorBackground' : 'statusBarItem.warningBackground');
    },
    dispose: () => item.dispose(),
  };
}

export function secrets(context: vscode.ExtensionContext): vscode.SecretStorage {
  return context.secrets;
}

/** Package.json of this extension (the server's identity lives there, once). */
/** The launcher of the server this VSIX carries (`bundled/tool/launch.py`), if it carries one. */
export function bundledLauncher(context: vscode.ExtensionContext): string | undefined {
  const launcher = path.join(context.extensionPath, 'bundled', 'tool', 'launch.py');
  return fs.existsSync(launcher) ? launcher : undefined;
}

export function packageJson(context: vscode.ExtensionContext): any {
  return context.extension.packageJSON;
}

/** The next-edit decorations: the text an edit replaces struck through, its new text after it. */
export function nextEditPainter(): { paint(editor: vscode.TextEditor, edits: { range: Range; oldText: string; shown: string }[]): void } & Disposable {
  const removed = vscode.window.createTextEditorDecorationType({
    textDecoration: 'line-through', backgroundColor: new vscode.ThemeColor('diffEditor.removedTextBackground'),
  });
  const added = vscode.window.createTextEditorDecorationType({
    after: { color: new vscode.ThemeColor('editorGhostText.foreground'), fontStyle: 'italic',
             backgroundColor: new vscode.ThemeColor('diffEditor.insertedTextBackground'), margin: '0 0 0 2px' },
  });
  const asRange = (r: Range) => new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character);
  return {
    paint(editor, edits) {
      editor.setDecorations(removed, edits.filter(e => e.oldText !== '').map(e => asRange(e.range)));
      editor.setDecorations(added, edits.filter(e => e.shown !== '').map(e => ({
        range: asRange({ start: e.range.end, end: e.range.end }), renderOptions: { after: { contentText: e.shown } },
      })));
    },
    dispose() { removed.dispose(); added.dispose(); },
  };
}

/** Put the cursor at `at` in `editor` and scroll it into view. */
export function moveCursorInto(editor: vscode.TextEditor, at: Position): void {
  setCursor(editor, at);
  editor.revealRange(new vscode.Range(at.line, at.character, at.line, at.character),
                     vscode.TextEditorRevealType.InCenterIfOutsideViewport);
}

export function onSelectionChanged(listener: (editor: vscode.TextEditor) => void): Disposable {
  return vscode.window.onDidChangeTextEditorSelection(e => listener(e.textEditor));
}

export function onDocumentClosed(listener: (uri: string) => void): Disposable {
  return vscode.workspace.onDidCloseTextDocument(d => listener(d.uri.toString()));
}

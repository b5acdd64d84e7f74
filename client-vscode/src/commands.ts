/** The user's commands: rewrite, review, stop, redirect, continue, revert, API key. Each turns into one server
 *  command. */

import type { FloweditClient } from './client';
import { flowEditSays, shownByServer } from './messages';
import { presetChoices, type RewriteTarget } from './instruction';
import { quietEnd, reviewArgs, type ReviewScope } from './review';
import { DEFAULT_PRESETS, toServerSettings } from './settings';
import type { ReviewFigures } from './status';
import type { StatusBar } from './statusbar';
import * as api from './vscodeapi';

export const SECRET_KEY = 'flowedit.apiKey';

export interface RewriteStarted { id: string; mode: string }

export class Commands {
  /** The latest rewrite started from this window, per document (redirect targets it). */
  private readonly lastRewrite = new Map<string, string>();
  /** Reviews started from this window that have not ended yet. */
  private readonly reviews = new Set<string>();

  constructor(
    private readonly client: FloweditClient,
    private readonly status: StatusBar,
    private readonly secrets: { store(k: string, v: string): Thenable<void>; delete(k: string): Thenable<void> },
    private readonly started: (id: string, instruction: string) => void = () => undefined,
    private readonly showReport: (text: string) => void = () => undefined,
    private readonly reviewed: (id: string, scope: ReviewScope) => void = () => undefined,
  ) {}

  async rewriteSelection(): Promise<void> {
    const editor = api.activeEditor();
    if (!editor || editor.selection.isEmpty) {
      void api.showInfo('FlowEdit: select the code to rewrite first.');
      return;
    }
    await this.rewrite({ uri: editor.document.uri.toString(), range: this.client.lspRange(editor.selection) });
  }

  /** Ask for the instruction (a preset or free text), then rewrite `target`. The lightbulb's
   *  "Rewrite selection…" comes here too. Undefined when dismissed or refused. */
  async rewrite(target: RewriteTarget): Promise<RewriteStarted | undefined> {
    const presets = toServerSettings(api.setting).rewrite.presets ?? DEFAULT_PRESETS;
    const instruction = await api.pickOrType('FlowEdit: Rewrite Selection',
      'Pick a preset or type an instruction and press Enter', presetChoices(presets), typed => `$(edit) ${typed}`);
    if (instruction === undefined) return undefined;
    return this.run(async () => {
      const started = await this.client.command<RewriteStarted>('flowedit.rewrite', { ...target, instruction });
      this.lastRewrite.set(target.uri, started.id);
      this.status.rewriteStarted(started.id);
      this.started(started.id, instruction);
      return started;
    });
  }

  /** Review the selection, the file, or every uncommitted change of the workspace ("changes"); the
   *  findings arrive as diagnostics. */
  async review(scope: ReviewScope): Promise<void> {
    const editor = api.activeEditor();
    const args = reviewArgs(scope, editor && {
      uri: editor.document.uri.toString(),
      selection: editor.selection.isEmpty ? undefined : this.client.lspRange(editor.selection),
    });
    if (typeof args === 'string') {
      void api.showInfo(args);
      return;
    }
    await this.run(async () => {
      const started = await this.client.command<{ id: string }>('flowedit.review', args);
      this.reviews.add(started.id);
      this.status.reviewStarted(started.id);
      this.reviewed(started.id, scope);
    });
  }

  /** A review's figures in `flowedit/status`: one of ours that ended with nothing to draw says so. */
  reviewStatus(review: ReviewFigures): void {
    if (!this.reviews.has(review.id) || review.state === 'reviewing') return;
    this.reviews.delete(review.id);
    const note = quietEnd(review);
    if (note) void api.showInfo(note);
  }

  /** Escape while a rewrite streams or a review runs: stop those of this document and the workspace's review
   *  (all, outside an editor or when none is of this document). What a review showed stays. */
  async interrupt(): Promise<void> {
    const editor = api.activeEditor();
    await this.run(async () => {
      const here = editor ? await this.client.command<unknown[]>('flowedit.interrupt', { uri: editor.document.uri.toString() }) : [];
      if (here.length === 0) await this.client.command('flowedit.interrupt', {});  // it streams into another file
    });
  }

  async redirect(): Promise<void> {
    const editor = api.activeEditor();
    const running = this.status.current.running;
    const id = (editor && this.lastRewrite.get(editor.document.uri.toString())) ?? running[running.length - 1];
    if (!id || !running.includes(id)) {
      void api.showInfo('FlowEdit: no rewrite is running to redirect.');
      return;
    }
    const instruction = await api.askText('New instruction for the running rewrite (the partial answer stays as context)');
    if (!instruction?.trim()) return;
    await this.run(() => this.client.command('flowedit.redirect', { id, instruction: instruction.trim() }));
  }

  /** The last rewrite of the active document, stopped or dropped, streams on from what it wrote. */
  async continueRewrite(): Promise<void> {
    const editor = api.activeEditor();
    if (!editor) return;
    await this.run(() => this.client.command('flowedit.continue', { uri: editor.document.uri.toString() }));
  }

  async revert(): Promise<void> {
    const editor = api.activeEditor();
    if (!editor) return;
    await this.run(() => this.client.command('flowedit.revert', { uri: editor.document.uri.toString() }));
  }

  /** "FlowEdit: Check Setup": the server checks itself (each feature's engine asked once, its endpoint and
   *  key, what this editor can do) and says the verdict in a message; the whole report goes to the log. */
  async checkSetup(): Promise<void> {
    const report = await this.run(() => this.client.command('flowedit.checkSetup', {}));
    const text = (report as { text?: unknown } | undefined)?.text;
    if (typeof text === 'string') this.showReport(text);
  }

  async setApiKey(): Promise<void> {
    const key = await api.askText('API key for the model endpoint (kept in VS Code\'s secret storage)',
      { password: true, placeHolder: 'sk-…' });
    if (!key?.trim()) return;
    await this.secrets.store(SECRET_KEY, key.trim());
    await this.client.restart();  // the key reaches the server through its environment
  }

  async clearApiKey(): Promise<void> {
    await this.secrets.delete(SECRET_KEY);
    await this.client.restart();
  }

  /** The server explains refusals itself (window/showMessage); anything else is shown here. */
  private async run<T>(action: () => Promise<T>): Promise<T | undefined> {
    try {
      return await action();
    } catch (e) {
      if (shownByServer(e)) return undefined;  // one toast for one refusal
      // (a button keeps the toast whole: VS Code cuts one without buttons to a line)
      void api.showWarning(flowEditSays(e instanceof Error ? e.message : String(e)), 'Show Log').then(choice => {
        if (choice === 'Show Log') void api.executeCommand('flowedit.showLog');
      });
      return undefined;
    }
  }
}

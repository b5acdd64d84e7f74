/** Folds client events into the status (status.ts) and shows it: status bar item and context key. */

import {
  connectionChanged, formatStatus, initialStatus, progressReceived, reviewStarted, rewriteStarted, statusReceived,
  type Connection, type Status, type StatusNotification,
} from './status';
import * as api from './vscodeapi';

/** Context key that is true while a rewrite streams; Escape is bound to "Stop Rewrite" under it. */
export const REWRITING_KEY = 'flowedit.rewriting';
/** Context key that is true while a review runs; Escape stops it too. */
export const REVIEWING_KEY = 'flowedit.reviewing';

export class StatusBar {
  private status: Status = initialStatus;
  private readonly item;
  private rewriting = false;
  private reviewing = false;
  private shownText = '';

  constructor(showLogCommand: string, private readonly onShown: (text: string) => void = () => undefined) {
    this.item = api.createStatusItem('flowedit.status', 'FlowEdit', showLogCommand);
    this.render();
  }

  get current(): Status {
    return this.status;
  }

  connection(state: Connection, error?: string): void { this.update(connectionChanged(this.status, state, error)); }
  serverStatus(n: StatusNotification): void { this.update(statusReceived(this.status, n)); }
  progress(token: string | number, value: { kind: string; message?: string }): void {
    this.update(progressReceived(this.status, token, value));
  }
  rewriteStarted(id: string): void { this.update(rewriteStarted(this.status, id)); }
  reviewStarted(id: string): void { this.update(reviewStarted(this.status, id)); }

  dispose(): void { this.item.dispose(); }

  private update(next: Status): void {
    this.status = next;
    this.render();
  }

  private render(): void {
    const view = formatStatus(this.status);
    this.item.show(view.text, view.tooltip, view.severity);
    const rewriting = this.status.running.length > 0;
    if (rewriting !== this.rewriting) {
      this.rewriting = rewriting;
      api.setContext(REWRITING_KEY, rewriting);
    }
    const reviewing = this.status.reviewing.length > 0;
    if (reviewing !== this.reviewing) {
      this.reviewing = reviewing;
      api.setContext(REVIEWING_KEY, reviewing);
    }
    if (view.text !== this.shownText) {
      this.shownText = view.text;
      this.onShown(view.text);
    }
  }
}

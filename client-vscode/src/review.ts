/** Pure: what "Review Selection / File / Uncommitted Changes" ask the server (`flowedit.review`), and what
 *  is said when a review ends with nothing to show. The findings themselves are diagnostics: VS Code draws
 *  them, lists them in Problems and offers their quick fixes with no code of ours. */

import type { ReviewFigures } from './status';

export type ReviewScope = 'selection' | 'file' | 'changes';

export interface ReviewArgs<R> {
  uri?: string;
  range?: R;
  scope: ReviewScope;
}

/** The active editor as a review sees it: its document and its selection (undefined when empty). */
export interface ReviewedEditor<R> {
  uri: string;
  selection?: R;
}

/** The command's argument, or why there is nothing to review. "changes" is the workspace's: every changed
 *  file, open or not, whatever the active editor. */
export function reviewArgs<R>(scope: ReviewScope, editor: ReviewedEditor<R> | undefined): ReviewArgs<R> | string {
  if (scope === 'changes') return { scope };
  if (!editor) return 'FlowEdit: open a file to review first.';
  if (scope === 'file') return { uri: editor.uri, scope };
  if (editor.selection === undefined) return 'FlowEdit: select the code to review first.';
  return { uri: editor.uri, range: editor.selection, scope };
}

/** A review that finished with no finding draws nothing: what to tell the user instead ("no problems
 *  found", "no uncommitted changes to review", ...). Undefined while it runs, when it shows findings, and
 *  when it was stopped or failed (the user stopped it, the server warned). */
export function quietEnd(review: ReviewFigures): string | undefined {
  if (review.state !== 'finished' || (review.findings ?? 0) > 0) return undefined;
  return `FlowEdit review: ${review.message || 'no problems found'}`;
}

/**
 * Pure: which shown inline item a partial accept (accept word / accept line) took, and how much of it.
 *
 * VS Code 1.100 tells a provider about partial accepts only through
 * `InlineCompletionItemProvider.handleDidPartiallyAcceptCompletionItem`, which belongs to the proposed
 * API `inlineCompletionsAdditions` (registering a provider that has it throws without the proposal,
 * and published extensions cannot enable proposals). So the extension runs VS Code's own
 * accept-word/accept-line commands itself and works out the accepted length from the document.
 */

/** An inline completion item as the server sent it (LSP `InlineCompletionItem`, insertText as a string). */
export interface ShownItem {
  insertText: string;
  /** Offset (UTF-16) in the document where the item's text starts. */
  start: number;
}

export interface PartialAccept {
  index: number;
  /** UTF-16 code units of the item's insertText now in the document (Copilot's `acceptedLength`). */
  acceptedLength: number;
}

/** The inline items VS Code was given for one request: where (offset, UTF-16) and at which version. */
export interface ShownAt {
  uri: string;
  version: number;
  at: number;
  items: readonly ShownItem[];
}

/**
 * Escape hid the ghost text in `uri` at `version` with the cursor at `cursor`: the index of the item it
 * hid (VS Code shows the first), if the items shown there are still the last ones asked for.
 */
export function findDismissed(shown: ShownAt | undefined, uri: string, version: number, cursor: number): number | undefined {
  if (!shown || shown.items.length === 0) return undefined;
  return shown.uri === uri && shown.version === version && shown.at === cursor ? 0 : undefined;
}

/**
 * After an accept command moved the cursor to `cursor` in `text`: the item whose insertText begins
 * with what now stands between its start and the cursor, if that is only part of it. A whole accept
 * is left to the item's own command.
 */
export function findPartialAccept(items: readonly ShownItem[], text: string, cursor: number): PartialAccept | undefined {
  for (let index = 0; index < items.length; index++) {
    const { insertText, start } = items[index];
    if (start > cursor) continue;
    const accepted = text.slice(start, cursor);
    if (accepted.length > 0 && accepted.length < insertText.length && insertText.startsWith(accepted)) {
      return { index, acceptedLength: accepted.length };
    }
  }
  return undefined;
}

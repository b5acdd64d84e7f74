/**
 * Pure: a rewrite's instruction — the presets offered for it, and which invocation of the server's
 * `flowedit.rewrite` still lacks one (the lightbulb's "Rewrite selection…" code action sends none; the
 * extension asks for it, as FlowEdit: Rewrite Selection… does, instead of letting the server fall back
 * to a generic instruction).
 */

import type { Preset } from './settings';

export const REWRITE_COMMAND = 'flowedit.rewrite';

/** What `flowedit.rewrite` rewrites: a document and an LSP range (and, if given, a mode). */
export interface RewriteTarget {
  uri: string;
  range: unknown;
  mode?: string;
}

/** A quick-pick entry: a preset's title, its instruction shown below and answered when picked. */
export interface PresetChoice {
  label: string;
  detail: string;
  value: string;
}

export function presetChoices(presets: readonly Preset[]): PresetChoice[] {
  return presets.map(p => ({ label: p.title, detail: p.instruction, value: p.instruction }));
}

/** The target of a `flowedit.rewrite` invocation that names no instruction; undefined for any other. */
export function openRewrite(command: string, args: readonly unknown[]): RewriteTarget | undefined {
  if (command !== REWRITE_COMMAND || args.length !== 1) return undefined;
  const a = args[0] as Partial<RewriteTarget & { instruction: unknown }> | null;
  if (!a || typeof a !== 'object' || typeof a.uri !== 'string' || !a.range) return undefined;
  if (typeof a.instruction === 'string' && a.instruction.trim() !== '') return undefined;
  return { uri: a.uri, range: a.range, ...(typeof a.mode === 'string' ? { mode: a.mode } : {}) };
}

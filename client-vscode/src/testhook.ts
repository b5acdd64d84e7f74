/**
 * For the end-to-end test only, and only when FLOWEDIT_VSCODE_TEST_TRACE names a file: append one JSON
 * line per document change (the full text, which the page's DOM cannot give reliably), per status
 * bar text, and per change of a file's FlowEdit diagnostics as VS Code holds them. Off, it registers nothing.
 */

import * as fs from 'node:fs';
import * as api from './vscodeapi';

export const TRACE_ENV = 'FLOWEDIT_VSCODE_TEST_TRACE';

export type Trace = (event: string, data: object) => void;

export function testTrace(): { trace: Trace; disposables: api.Disposable[] } {
  const file = process.env[TRACE_ENV];
  if (!file) return { trace: () => undefined, disposables: [] };
  const trace: Trace = (event, data) => {
    try {
      fs.appendFileSync(file, JSON.stringify({ t: Date.now(), event, ...data }) + '\n');
    } catch {
      // a test hook must never break the editor
    }
  };
  const changes = api.onDocumentChanged(e => {
    if (e.document.uri.scheme !== 'file' || e.contentChanges.length === 0) return;
    trace('change', { uri: e.document.uri.toString(), version: e.document.version, text: e.document.getText(),
                      changes: e.contentChanges.map(c => ({ offset: c.rangeOffset, length: c.rangeLength, text: c.text })) });
  });
  const findings = api.onFindingsChanged((uri, list) => {
    if (uri.startsWith('file:')) trace('diagnostics', { uri, findings: list });
  });
  trace('activated', {});
  return { trace, disposables: [changes, findings] };
}

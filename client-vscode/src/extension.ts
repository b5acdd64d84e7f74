/** Wires the parts together; holds no logic of its own. */

import { FloweditClient } from './client';
import { CURSOR_NOTIFICATION, NextEdits, SHOWN_KEY, shownText } from './nextedit';
import { Commands, SECRET_KEY } from './commands';
import { RESTART_KEYS, type ServerInfo } from './settings';
import { StatusBar } from './statusbar';
import { testTrace } from './testhook';
import * as api from './vscodeapi';

let client: FloweditClient | undefined;

export async function activate(context: api.ExtensionContext): Promise<void> {
  const info = api.packageJson(context).serverInfo as ServerInfo;
  const log = api.createOutputChannel(info.name);
  const { trace, disposables } = testTrace();
  const status = new StatusBar('flowedit.showLog', text => trace('status', { text }));
  const secrets = api.secrets(context);
  client = new FloweditClient(info, log, {
    connection: (state, error) => {
      status.connection(state, error);
      trace('connection', { state, error });
      if (state !== 'running') nextEdits.forget();  // (a new server predicts anew)
    },
    status: n => {
      status.serverStatus(n);
      if (n.review) commands.reviewStatus(n.review);
    },
    progress: (token, value) => status.progress(token, value),
    partialAccept: acceptedLength => trace('partialAccept', { acceptedLength }),
    openRewrite: target => commands.rewrite(target),
    nextEdit: note => nextEdits.onNote(note),
  }, () => Promise.resolve(secrets.get(SECRET_KEY)), api.bundledLauncher(context));
  const commands = new Commands(client, status, secrets, (id, instruction) => trace('rewrite', { id, instruction }),
    text => { log.info(text); log.show(true); trace('check', { text }); },
    (id, scope) => trace('review', { id, scope }));
  const c = client;
  const painter = api.nextEditPainter();
  const nextEdits = new NextEdits<api.TextEditor>({
    editorOf: uri => api.visibleEditor(c.codeUri(uri)),
    versionOf: uri => api.openDocument(c.codeUri(uri))?.version,
    draw: (editor, edits) => painter.paint(editor, edits.map(e => ({ ...e, shown: shownText(e.newText) }))),
    cursor: editor => api.selectionOf(editor).active,
    moveCursor: (editor, at) => api.moveCursorInto(editor, at),
    setShown: shown => api.setContext(SHOWN_KEY, shown),
    command: (name, argument) => c.command(name, argument),
    trace,
  });

  context.subscriptions.push(
    log, status, ...disposables,
    api.registerCommand('flowedit.rewriteSelection', () => commands.rewriteSelection()),
    api.registerCommand('flowedit.interruptRewrite', () => commands.interrupt()),
    api.registerCommand('flowedit.reviewSelection', () => commands.review('selection')),
    api.registerCommand('flowedit.reviewFile', () => commands.review('file')),
    api.registerCommand('flowedit.reviewChanges', () => commands.review('changes')),
    api.registerCommand('flowedit.redirectRewrite', () => commands.redirect()),
    api.registerCommand('flowedit.continueRewrite', () => commands.continueRewrite()),
    api.registerCommand('flowedit.revertLastRewrite', () => commands.revert()),
    api.registerCommand('flowedit.setApiKey', () => commands.setApiKey()),
    api.registerCommand('flowedit.clearApiKey', () => commands.clearApiKey()),
    api.registerCommand('flowedit.restartServer', () => c.restart()),
    api.registerCommand('flowedit.showLog', () => log.show()),
    api.registerCommand('flowedit.checkSetupReport', () => commands.checkSetup()),
    api.registerCommand('flowedit.acceptNextWord', () => c.acceptPartially('editor.action.inlineSuggest.acceptNextWord')),
    api.registerCommand('flowedit.acceptNextLine', () => c.acceptPartially('editor.action.inlineSuggest.acceptNextLine')),
    api.registerCommand('flowedit.dismissInline', () => c.dismissInline()),
    api.registerCommand('flowedit.nextEdit.tab', () => nextEdits.tab()),
    api.registerCommand('flowedit.nextEdit.dismiss', () => nextEdits.dismiss()),
    api.onSelectionChanged(editor => {
      const at = api.selectionOf(editor).active, uri = c.serverUri(editor.document.uri);
      if (uri && nextEdits.cursorMoved(uri, at)) c.notify(CURSOR_NOTIFICATION, { uri, position: at });
    }),
    api.onDocumentClosed(uri => nextEdits.forget(uri)),
    painter,
    api.onSettingsChanged(affects => {
      trace('settings', { endpoint: api.setting('endpoint'), inline: api.setting('inline.enabled') });
      if (RESTART_KEYS.some(affects)) void c.restart();
      else if (affects('flowedit')) void c.settingsChanged();
    }),
    { dispose: () => void c.stop() },
  );
  await client.restart();
}

export function deactivate(): Promise<void> | undefined {
  return client?.stop();
}

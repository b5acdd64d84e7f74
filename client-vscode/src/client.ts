/**
 * The language client: starts `flowedit lsp` over stdio, sends settings, forwards status and progress,
 * keeps the inline items VS Code shows (for partial accepts), sends the server's commands, applies a
 * rewrite's edits as one undo step (rewriteedits.ts) and asks the lightbulb's open rewrite for its
 * instruction.
 */

import { execFile, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as vscode from 'vscode';
import {
  CloseAction, DidChangeConfigurationNotification, ErrorAction, ExecuteCommandRequest, LanguageClient,
  ShowMessageNotification, State,
  type LanguageClientOptions, type Middleware, type ServerOptions, type StaticFeature,
} from 'vscode-languageclient/node';
import * as readline from 'node:readline';
import { StderrTail, exitMessage } from './exits';
import { openRewrite, type RewriteTarget } from './instruction';
import { findDismissed, findPartialAccept, type ShownItem } from './partial';
import { flowEditSays, serverMessage } from './messages';
import { NEXT_EDIT_NOTIFICATION, type NextEditNote } from './nextedit';
import { RestartQueue } from './restart';
import { APPLY_REWRITE_EDIT, RewriteEdits, withRewriteEdits, type EditorPort, type RewriteEditParams } from './rewriteedits';
import { pythonSetting, remoteHint, serverEnv, serverLaunch, toServerSettings, type ServerInfo, type ServerLaunch, type ServerSettings } from './settings';
import type { Connection, StatusNotification } from './status';
import * as api from './vscodeapi';

export const STATUS_NOTIFICATION = 'flowedit/status';
export const PARTIAL_ACCEPT_NOTIFICATION = 'textDocument/didPartiallyAcceptCompletion';
/** Escape on ghost text: the item dismissed (the server does not offer that text there again). */
export const DISMISSED_NOTIFICATION = 'flowedit/dismissed';

/** What the client reports to the rest of the extension. */
export interface ClientEvents {
  connection(state: Connection, error?: string): void;
  status(n: StatusNotification): void;
  progress(token: string | number, value: { kind: string; message?: string }): void;
  /** A partial accept was forwarded to the server. */
  partialAccept?(acceptedLength: number): void;
  /** A `flowedit.rewrite` without an instruction (the lightbulb's "Rewrite selection…"): ask, then run it. */
  openRewrite?(target: RewriteTarget): Promise<unknown>;
  /** `flowedit/nextEdit`: a next edit to show, or to clear. */
  nextEdit?(note: NextEditNote): void;
}

/** Why the server cannot be started, in the user's words, with the one command that fixes it (if one does). */
export class NotInstalled extends Error {
  constructor(message: string, readonly installCommand = '') { super(message); }
}

interface ShownItems {
  uri: string;
  version: number;
  at: number;
  items: ShownItem[];
  raw: unknown[];
}

export class FloweditClient {
  private client: LanguageClient | undefined;
  private process: ChildProcess | undefined;  // the running server's, once it answered initialize
  private readonly restarts = new RestartQueue(() => this.restartNow());
  private shown: ShownItems | undefined;

  constructor(
    private readonly info: ServerInfo,
    private readonly log: vscode.LogOutputChannel,
    private readonly events: ClientEvents,
    private readonly apiKey: () => Promise<string | undefined>,
    /** This VSIX's bundled server launcher (`bundled/tool/launch.py`), if it carries one. */
    private readonly launcher?: string,
  ) {}

  get running(): boolean {
    return this.client?.state === State.Running;
  }

  /** (Re)start the server; requests made while one runs are folded into one more. Never throws. */
  restart(): Promise<void> {
    return this.restarts.request();
  }

  async stop(): Promise<void> {
    const old = this.client, process = this.process;
    this.client = this.process = undefined;
    if (old) {
      try {
        await old.stop(3000);
      } catch (e) {
        this.log.warn(`stopping the server: ${String(e)}`);
      }
      await old.dispose().catch(() => undefined);
    }
    if (process && !(await exited(process))) process.kill();  // it did not exit when asked to
  }

  /** Settings changed that a running server can take as they are. */
  async settingsChanged(): Promise<void> {
    if (!this.running) return;
    await this.client!.sendNotification(DidChangeConfigurationNotification.type, { settings: this.settings() })
      .catch(e => this.log.warn(`didChangeConfiguration: ${String(e)}`));
  }

  /** `workspace/executeCommand` of a server command with its one object argument. */
  async command<T>(command: string, argument: object): Promise<T> {
    if (!this.running) throw new Error('the FlowEdit server is not running (see the FlowEdit log)');
    return this.client!.sendRequest(ExecuteCommandRequest.type, { command, arguments: [argument] }) as Promise<T>;
  }

  /** A notification of flowedit's own (`flowedit/cursor`); dropped while no server runs. */
  notify(method: string, params: object): void {
    if (this.running) void this.client!.sendNotification(method, params).catch(e => this.log.warn(`${method}: ${String(e)}`));
  }

  /** The server's URI of a document (as languageclient sends it). */
  serverUri(uri: vscode.Uri): string | undefined {
    return this.client?.code2ProtocolConverter.asUri(uri);
  }

  /** VS Code's URI string of a document the server names. */
  codeUri(uri: string): string {
    return this.client ? this.client.protocol2CodeConverter.asUri(uri).toString() : uri;
  }

  /** The LSP range of a VS Code range (UTF-16 positions, as negotiated). */
  lspRange(range: vscode.Range) {
    return this.client!.code2ProtocolConverter.asRange(range);
  }

  /** Runs VS Code's accept-word/line command, then tells the server how much of the item was taken. */
  async acceptPartially(vscodeCommand: string): Promise<void> {
    const before = api.activeEditor();
    const shown = this.shown;
    await api.executeCommand(vscodeCommand);
    const editor = api.activeEditor();
    if (!editor || editor !== before || !shown || shown.uri !== editor.document.uri.toString() || !this.running) return;
    const doc = editor.document;
    const found = findPartialAccept(shown.items, doc.getText(), doc.offsetAt(editor.selection.active));
    if (!found) return;
    this.log.debug(`partial accept of ${found.acceptedLength} UTF-16 units`);
    try {
      await this.client!.sendNotification(PARTIAL_ACCEPT_NOTIFICATION,
        { item: shown.raw[found.index], acceptedLength: found.acceptedLength });
      this.events.partialAccept?.(found.acceptedLength);
    } catch (e) {
      this.log.warn(`${PARTIAL_ACCEPT_NOTIFICATION}: ${String(e)}`);
    }
  }

  /** Escape on ghost text: VS Code hides it, and the server hears which item was dismissed. */
  async dismissInline(): Promise<void> {
    const editor = api.activeEditor();
    const shown = this.shown;
    await api.executeCommand('editor.action.inlineSuggest.hide');
    if (!editor || !shown) return;
    const doc = editor.document;
    const index = findDismissed(shown, doc.uri.toString(), doc.version, doc.offsetAt(editor.selection.active));
    if (index === undefined) return;
    this.shown = undefined;
    this.notify(DISMISSED_NOTIFICATION, { item: shown.raw[index] });
  }

  private settings(): ServerSettings {
    return toServerSettings(api.setting);
  }

  private async restartNow(): Promise<void> {
    await this.stop();
    this.events.connection('starting');
    let launch: ServerLaunch;
    try {
      launch = serverLaunch(api.setting, this.info, await findPython(), this.launcher);
      await preflight(launch, this.info);
    } catch (e) {
      const hint = remoteHint(api.remoteName(), api.setting);
      if (hint && e instanceof Error) e.message += hint;
      return this.failed(e);
    }
    const settings = this.settings();
    const env = serverEnv(process.env, settings, await this.apiKey());
    const tail = new StderrTail();
    let server: ChildProcess | undefined;
    // the process is started here so that its exit code and last stderr lines can be told when it ends
    const serverOptions: ServerOptions = async () => (server = spawn(launch.command, launch.args, { env }));
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
      outputChannel: this.log,
      initializationOptions: settings,
      middleware: this.middleware(),
      stdioOptions: {
        stdout: () => undefined,  // the LSP stream itself
        stderr: (input, channel) => {
          readline.createInterface({ input, crlfDelay: Infinity, terminal: false, historySize: 0 })
            .on('line', line => { tail.push(line + '\n'); channel.appendLine(line); });
        },
      },
      // one message of ours when the server ends, never languageclient's own (nor its restarts)
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue, handled: true }),
        closed: () => {
          if (this.client === client) void this.serverEnded(client, server, tail);
          return { action: CloseAction.DoNotRestart, handled: true };
        },
      },
    };
    const client = new LanguageClient(this.info.module, this.info.name, serverOptions, clientOptions);
    this.client = client;
    const rewriteEdits = new RewriteEdits(editorPort(client));
    client.registerFeature(rewriteEditsFeature);
    client.onRequest(APPLY_REWRITE_EDIT, (params: RewriteEditParams) => rewriteEdits.apply(params));
    client.onDidChangeState(e => {
      if (this.client !== client) return;
      if (e.newState === State.Running) this.events.connection('running');
      else if (e.newState === State.Stopped) this.events.connection('stopped');
    });
    // the server's messages, shown with buttons (languageclient's own show a toast cut to one line)
    client.onNotification(ShowMessageNotification.type, params => this.showServerMessage(params.type, params.message));
    client.onNotification(NEXT_EDIT_NOTIFICATION, (note: NextEditNote) => this.events.nextEdit?.(note));
    client.onNotification(STATUS_NOTIFICATION, (n: StatusNotification) => {
      if (n.request?.outcome && typeof n.request.id === 'string') rewriteEdits.ended(n.request.id);
      this.events.status(n);
    });
    this.log.info(`starting ${launch.command} ${launch.args.join(' ')}`);
    try {
      await client.start();
      this.process = server;
      this.events.connection('running');
    } catch (e) {
      if (this.client === client) this.client = undefined;
      await client.dispose().catch(() => undefined);
      // a server that exited says more (its exit code, its last stderr lines) than the broken connection
      return this.failed(await exited(server) ? new Error(exitMessage(server!.exitCode, server!.signalCode, tail.last)) : e);
    }
  }

  /** The server process ended while in use: say so once, with its exit code and last words. */
  private async serverEnded(client: LanguageClient, server: ChildProcess | undefined, tail: StderrTail): Promise<void> {
    await exited(server);
    if (this.client !== client || this.process !== server) return;  // stopping, restarting, or not started yet
    this.client = undefined;
    const message = exitMessage(server?.exitCode ?? null, server?.signalCode ?? null, tail.last);
    this.log.error(message);
    this.events.connection('error', message);
    void api.showError(flowEditSays(message), 'Restart', 'Open Log').then(choice => {
      if (choice === 'Restart') void this.restart();
      if (choice === 'Open Log') this.log.show();
    });
  }

  private showServerMessage(type: number, message: string): void {
    const { severity, buttons } = serverMessage(type, message);
    const show = severity === 'error' ? api.showError : severity === 'warning' ? api.showWarning : api.showInfo;
    void show(message, ...buttons).then(choice => {
      if (choice === 'Show Log') this.log.show();
      if (choice === 'Open Settings') void api.executeCommand('workbench.action.openSettings', 'flowedit.');
    });
  }

  private failed(e: unknown): void {
    const message = e instanceof Error ? e.message : String(e);
    this.log.error(`the server did not start: ${message}`);
    this.events.connection('error', message);
    const buttons = e instanceof NotInstalled && e.installCommand ? ['Copy Install Command', 'Open Log'] : ['Open Log'];
    void api.showError(flowEditSays(message), ...buttons).then(choice => {
      if (choice === 'Open Log') this.log.show();
      if (choice === 'Copy Install Command' && e instanceof NotInstalled) void api.copyToClipboard(e.installCommand);
    });
  }

  private middleware(): Middleware {
    return {
      executeCommand: (command, args, next) => {
        const target = openRewrite(command, args);
        return target && this.events.openRewrite ? this.events.openRewrite(target) : next(command, args);
      },
      handleWorkDoneProgress: (token, params, next) => {
        this.events.progress(token, params as { kind: string; message?: string });
        next(token, params);
      },
      provideInlineCompletionItems: async (document, position, context, token, next) => {
        // (asked while the server restarts, languageclient's provider threw a TypeError)
        if (api.setting('inline.enabled') === false || !this.running) return null;
        const result = await next(document, position, context, token);
        const items = Array.isArray(result) ? result : result?.items ?? [];
        this.shown = {
          uri: document.uri.toString(),
          version: document.version,
          at: document.offsetAt(position),
          items: items.map(i => ({
            insertText: typeof i.insertText === 'string' ? i.insertText : i.insertText.value,
            start: document.offsetAt(i.range?.start ?? position),
          })),
          raw: items.map(i => this.asLspItem(i, position)),
        };
        return result;
      },
    };
  }

  private asLspItem(item: vscode.InlineCompletionItem, position: vscode.Position): object {
    const c2p = this.client!.code2ProtocolConverter;
    return {
      insertText: typeof item.insertText === 'string' ? item.insertText : item.insertText.value,
      range: c2p.asRange(item.range ?? { start: position, end: position } as vscode.Range),
      ...(item.filterText !== undefined ? { filterText: item.filterText } : {}),
      ...(item.command ? { command: { title: item.command.title, command: item.command.command,
                                      arguments: item.command.arguments } } : {}),
    };
  }
}

/** Declares `flowedit/applyRewriteEdit` in initialize (capabilities.experimental.flowedit). */
const rewriteEditsFeature: StaticFeature = {
  fillClientCapabilities: capabilities => { capabilities.experimental = withRewriteEdits(capabilities.experimental); },
  initialize: () => undefined,
  getState: () => ({ kind: 'static' }),
  clear: () => undefined,
};

/** The editors as rewriteedits.ts sees them, in the server's URIs and positions (UTF-16, as negotiated). */
function editorPort(client: LanguageClient): EditorPort<api.TextEditor> {
  const p2c = client.protocol2CodeConverter;
  const key = (uri: string) => p2c.asUri(uri).toString();
  return {
    editorOf: uri => api.visibleEditor(key(uri)),
    versionOf: uri => api.openDocument(key(uri))?.version,
    edit: (editor, edits, undoStopBefore) =>
      api.editInEditor(editor, edits.map(e => ({ range: p2c.asRange(e.range), text: e.newText })), undoStopBefore),
    workspaceEdit: async edit => {
      const converted = await p2c.asWorkspaceEdit(edit);
      return () => api.applyWorkspaceEdit(converted);
    },
    selectionOf: editor => api.selectionOf(editor),
    setCursor: (editor, at) => api.setCursor(editor, at),
    whenVisible: (uri, ms) => api.whenVisible(key(uri), ms),
  };
}

/** Whether `server` has ended (waiting up to 2 s for it to). */
async function exited(server: ChildProcess | undefined): Promise<boolean> {
  if (!server) return false;
  if (server.exitCode === null && server.signalCode === null) {
    await new Promise(resolve => { server.once('exit', resolve); setTimeout(resolve, 2000); });
  }
  return server.exitCode !== null || server.signalCode !== null;
}

/** The interpreter to run the server with: `flowedit.server.python`, else the Python extension's, else
 * `python3` (then `python`) on PATH; NotInstalled when there is none. */
async function findPython(): Promise<string> {
  const found = pythonSetting(api.setting) ?? await api.pythonExtensionInterpreter()
    ?? ['python3', 'python'].find(onPath);
  if (!found) {
    throw new NotInstalled('the server needs Python 3.11 or newer, and none was found (no flowedit.server.python, no ' +
                           'interpreter selected in the Python extension, no python3 on PATH): install one, or ' +
                           'set flowedit.server.python');
  }
  return found;
}

/** Fails with NotInstalled when the interpreter, the command or the server is missing or cannot run. */
async function preflight(launch: ServerLaunch, info: ServerInfo): Promise<void> {
  if (!onPath(launch.command)) {
    const what = launch.via === 'command' ? 'server command' : 'Python interpreter';
    const setting = launch.via === 'command' ? 'command' : 'python';
    throw new NotInstalled(`the ${what} "${launch.command}" was not found; set flowedit.server.${setting}`,
                           launch.installHint);
  }
  if (launch.via === 'command') return;
  const probe = launch.via === 'bundled' ? [launch.args[0], '--version'] : ['-c', `import ${info.module}.cli`];
  const result = await new Promise<{ code: number | null; stderr: string }>(resolve => {
    execFile(launch.command, probe, { timeout: 20000 }, (err, _out, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stderr: String(stderr) }));
  });
  if (result.code === 0) return;
  const last = result.stderr.trim().split('\n').pop() ?? '';
  if (launch.via === 'bundled') {
    // the launcher's own message says which Python versions the bundle has (exit 3)
    throw new NotInstalled(result.code === 3 ? last.replace(/^flowedit: /, '')
      : `${launch.command} cannot run the bundled server: ${last || `exit ${result.code}`}`);
  }
  throw new NotInstalled(/No module named/.test(result.stderr)
    ? `${info.name} is not installed for ${launch.command}. Install it with: ${launch.installHint}`
    : `${launch.command} cannot load ${info.module}: ${last}`, launch.installHint);
}

function onPath(command: string): boolean {
  if (command.includes('/') || command.includes(path.sep)) return isExecutable(command);
  return (process.env.PATH ?? '').split(path.delimiter).some(dir => dir && isExecutable(path.join(dir, command)));
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

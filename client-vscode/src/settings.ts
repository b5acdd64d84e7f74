/** Pure: VS Code settings → the server's settings object, and how to start the server. No vscode import. */

export interface Preset {
  title: string;
  instruction: string;
}

/** What the server reads from initializationOptions / workspace/didChangeConfiguration (server/flowedit/lsp/settings/model.py). */
export interface ServerSettings {
  endpoint: string | null;
  model: string | null;
  upstream: string | null;
  api_key_env: string;
  multiplex: 'auto' | 'on' | 'off';
  exclude: string[] | null;
  inline: { enabled: boolean };
  next_edit: { enabled: boolean };
  rewrite: {
    mode: 'auto' | 'replace' | 'diff';
    diff_threshold_lines: number;
    context_tokens: number;
    presets: Preset[] | null;
    frame_ms: number | null;
  };
}

/** Settings that decide where the key goes or what runs: read from the user's (or, for machine-scoped
 * ones in a remote window, the remote's) settings only, never from a workspace's `.vscode/settings.json`
 * — a cloned repository must not redirect the key or start a command. package.json scopes them
 * `application` / `machine` too; reading them through `userScoped` does not rely on that alone. */
export const PROTECTED_KEYS = ['endpoint', 'apiKeyEnv', 'upstream', 'server.command', 'server.python', 'server.importStrategy'];

/** What `WorkspaceConfiguration.inspect()` says of a setting, the parts `userScoped` reads. */
export interface Inspected { defaultValue?: unknown; globalValue?: unknown; workspaceValue?: unknown; workspaceFolderValue?: unknown }

/** The user's value of a protected setting, else its default; workspace and folder values are ignored. */
export function userScoped(inspected: Inspected | undefined): unknown {
  return inspected?.globalValue ?? inspected?.defaultValue;
}

/** Reads one `flowedit.*` setting by its key below `flowedit.` (e.g. `rewrite.mode`). */
export type SettingReader = (key: string) => unknown;

const text = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);
const int = (v: unknown, fallback: number, min: number): number =>
  typeof v === 'number' && Number.isInteger(v) && v >= min ? v : fallback;
const ms = (v: unknown, max: number): number | undefined =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= max ? v : undefined;
const oneOf = <T extends string>(v: unknown, allowed: readonly T[], fallback: T): T =>
  allowed.includes(v as T) ? (v as T) : fallback;

function presets(v: unknown): Preset[] | undefined {
  if (!Array.isArray(v)) return undefined;
  return v.filter((p): p is Preset => typeof p?.title === 'string' && typeof p?.instruction === 'string' && p.title !== '')
    .map(p => ({ title: p.title, instruction: p.instruction }));
}

/**
 * The server's settings from the contributed ones. A setting the user cleared (empty or unset) is sent
 * as null: the server's rule is that null goes back to its command line / environment / default, while
 * a key left out keeps its current value — so clearing a setting really clears it.
 */
export function toServerSettings(get: SettingReader): ServerSettings {
  const out: ServerSettings = {
    api_key_env: text(get('apiKeyEnv')) ?? 'OPENAI_API_KEY',
    multiplex: oneOf(get('multiplex'), ['auto', 'on', 'off'] as const, 'auto'),
    inline: { enabled: get('inline.enabled') !== false },
    next_edit: { enabled: get('nextEdit.enabled') !== false },
    rewrite: {
      mode: oneOf(get('rewrite.mode'), ['auto', 'replace', 'diff'] as const, 'auto'),
      diff_threshold_lines: int(get('rewrite.diffThresholdLines'), 40, 1),
      context_tokens: int(get('rewrite.contextTokens'), 2000, 0),
      presets: presets(get('rewrite.presets')) ?? null,
      frame_ms: ms(get('rewrite.frameMs'), 1000) ?? null,
    },
    endpoint: text(get('endpoint')) ?? null,
    model: text(get('model')) ?? null,
    upstream: text(get('upstream')) ?? null,
    exclude: null,
  };
  const exclude = get('exclude');
  if (Array.isArray(exclude)) out.exclude = exclude.filter((g): g is string => typeof g === 'string');
  return out;
}

/** The default presets of the server, for the quick pick when the user has not configured any. */
export const DEFAULT_PRESETS: Preset[] = [
  { title: 'Fix bugs', instruction: 'Fix any bugs in this code. Keep its behaviour otherwise.' },
  { title: 'Simplify', instruction: 'Simplify this code without changing what it does.' },
  { title: 'Add type hints', instruction: 'Add precise type hints.' },
  { title: 'Add docstring', instruction: 'Add a concise docstring.' },
];

/** How the server process is started. */
export interface ServerLaunch {
  command: string;
  args: string[];
  /** `bundled`: the server this extension carries (`<python> bundled/tool/launch.py lsp`); `python`: the
   * one installed for that interpreter (`<python> -m <module>.cli lsp`); `command`: the user's command. */
  via: 'command' | 'python' | 'bundled';
  /** The one command that installs the server for this launch (`python` only; empty otherwise). */
  installHint: string;
}

/** Identity of the server, defined once in package.json (`serverInfo`). */
export interface ServerInfo {
  name: string;
  module: string;
  /** After `<python>`: the command that installs the server into that interpreter's environment. */
  installCommand: string;
}

const LOG_LEVELS = ['debug', 'info', 'warning', 'error'] as const;

/** What to add to a "no server" message in a remote window where no `server.*` setting reached the
 *  extension: VS Code reads machine settings there from the Remote settings, never the User settings. */
export function remoteHint(remote: string | undefined, get: SettingReader): string {
  const set = pythonSetting(get) !== undefined || (Array.isArray(get('server.command')) && (get('server.command') as unknown[]).length > 0);
  return remote && !set ? ` (in a remote window, set flowedit.server.python or .command in the Remote settings: ` +
    `Preferences: Open Remote Settings; User settings do not apply there)` : '';
}

/** The interpreter the user set (`flowedit.server.python`), if any. */
export function pythonSetting(get: SettingReader): string | undefined {
  return text(get('server.python'));
}

/** `flowedit.server.command` wins; otherwise `python` runs the bundled server (`launcher`: this VSIX's
 * `bundled/tool/launch.py`, when it carries one and `flowedit.server.importStrategy` is `useBundled`, the
 * default) or the one installed for it. */
export function serverLaunch(get: SettingReader, info: ServerInfo, python: string, launcher?: string): ServerLaunch {
  const cmd = get('server.command');
  if (Array.isArray(cmd) && cmd.length > 0 && cmd.every(c => typeof c === 'string') && cmd[0].trim() !== '') {
    return { command: cmd[0], args: cmd.slice(1), via: 'command', installHint: '' };
  }
  const logLevel = ['--log-level', oneOf(get('server.logLevel'), LOG_LEVELS, 'warning').toUpperCase()];
  if (launcher && get('server.importStrategy') !== 'fromEnvironment') {
    return { command: python, args: [launcher, 'lsp', ...logLevel], via: 'bundled', installHint: '' };
  }
  return { command: python, args: ['-m', `${info.module}.cli`, 'lsp', ...logLevel], via: 'python',
           installHint: `${quote(python)} ${info.installCommand}` };
}

/** The environment of the server process: the editor's, plus the stored API key under its variable. */
export function serverEnv(base: Record<string, string | undefined>, settings: ServerSettings,
                          apiKey: string | undefined): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) if (v !== undefined) env[k] = v;
  if (apiKey) env[settings.api_key_env] = apiKey;
  return env;
}

/** Settings whose change needs a new server process rather than a didChangeConfiguration. */
export const RESTART_KEYS = ['flowedit.server', 'flowedit.apiKeyEnv'];

function quote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PROTECTED_KEYS, pythonSetting, remoteHint, serverEnv, serverLaunch, toServerSettings, userScoped } from '../src/settings';

const info = { name: 'FlowEdit', module: 'flowedit', installCommand: '-m pip install flowedit' };
const reader = (values: Record<string, unknown>) => (key: string) => values[key];

test('unset settings are sent as null: the server goes back to its command line, environment, defaults', () => {
  assert.deepEqual(toServerSettings(reader({})), {
    endpoint: null, model: null, upstream: null, exclude: null,
    api_key_env: 'OPENAI_API_KEY', multiplex: 'auto', inline: { enabled: true }, next_edit: { enabled: true },
    rewrite: { mode: 'auto', diff_threshold_lines: 40, context_tokens: 2000, presets: null, frame_ms: null },
  });
});

test('contributed settings map to the server names', () => {
  const s = toServerSettings(reader({
    endpoint: ' ws://127.0.0.1:9/v1/responses ', model: 'scripted', upstream: 'openai', apiKeyEnv: 'MY_KEY',
    multiplex: 'off', exclude: ['*.secret', 3], 'inline.enabled': false, 'nextEdit.enabled': false, 'rewrite.mode': 'diff',
    'rewrite.diffThresholdLines': 10, 'rewrite.contextTokens': 0, 'rewrite.frameMs': 0,
    'rewrite.presets': [{ title: 'Shout', instruction: 'Use capitals.' }, { title: '', instruction: 'x' }, 'bad'],
  }));
  assert.deepEqual(s, {
    endpoint: 'ws://127.0.0.1:9/v1/responses', model: 'scripted', upstream: 'openai', api_key_env: 'MY_KEY',
    multiplex: 'off', exclude: ['*.secret'], inline: { enabled: false }, next_edit: { enabled: false },
    rewrite: { mode: 'diff', diff_threshold_lines: 10, context_tokens: 0,
               presets: [{ title: 'Shout', instruction: 'Use capitals.' }], frame_ms: 0 },
  });
});

test('invalid values fall back to defaults instead of reaching the server', () => {
  const s = toServerSettings(reader({ multiplex: 'sometimes', 'rewrite.mode': 42, 'rewrite.diffThresholdLines': 0,
                                      'rewrite.contextTokens': 1.5, 'rewrite.frameMs': -1, endpoint: '', apiKeyEnv: '  ' }));
  assert.equal(s.multiplex, 'auto');
  assert.equal(s.rewrite.mode, 'auto');
  assert.equal(s.rewrite.diff_threshold_lines, 40);
  assert.equal(s.rewrite.context_tokens, 2000);
  assert.equal(s.rewrite.frame_ms, null);  // the server's own (16.7 ms)
  assert.equal(toServerSettings(reader({ 'rewrite.frameMs': 1e308 })).rewrite.frame_ms, null);
  assert.equal(toServerSettings(reader({ 'rewrite.frameMs': 33.3 })).rewrite.frame_ms, 33.3);
  assert.equal(s.api_key_env, 'OPENAI_API_KEY');
  assert.equal(s.endpoint, null);  // cleared: null, so the server drops the value it had
});

test('the server starts from the bundle, else from python -m flowedit.cli lsp, unless a command is set', () => {
  const launcher = '/ext/bundled/tool/launch.py';
  assert.deepEqual(serverLaunch(reader({}), info, '/usr/bin/python3', launcher), {
    command: '/usr/bin/python3', args: [launcher, 'lsp', '--log-level', 'WARNING'], via: 'bundled', installHint: '',
  });
  assert.deepEqual(serverLaunch(reader({ 'server.importStrategy': 'fromEnvironment' }), info, '/venv/bin/python', launcher), {
    command: '/venv/bin/python', args: ['-m', 'flowedit.cli', 'lsp', '--log-level', 'WARNING'], via: 'python',
    installHint: '/venv/bin/python -m pip install flowedit',
  });
  assert.equal(serverLaunch(reader({}), info, 'python3').via, 'python');  // a VSIX without the bundle
  const cmd = serverLaunch(reader({ 'server.command': ['flowedit', 'lsp', '--log-level', 'DEBUG'] }), info, 'python3', launcher);
  assert.deepEqual([cmd.command, cmd.args, cmd.via], ['flowedit', ['lsp', '--log-level', 'DEBUG'], 'command']);
  assert.equal(serverLaunch(reader({ 'server.command': [''] }), info, 'python3', launcher).via, 'bundled');
  assert.equal(serverLaunch(reader({}), info, '/my env/python').installHint, "'/my env/python' -m pip install flowedit");
  assert.deepEqual(serverLaunch(reader({ 'server.logLevel': 'info' }), info, 'python3', launcher).args.slice(-2),
                   ['--log-level', 'INFO']);
  assert.equal(pythonSetting(reader({ 'server.python': '  ' })), undefined);
  assert.equal(pythonSetting(reader({ 'server.python': '/venv/bin/python' })), '/venv/bin/python');
});

test('the API key reaches the server under the configured variable only', () => {
  const settings = toServerSettings(reader({ apiKeyEnv: 'MY_KEY' }));
  assert.deepEqual(serverEnv({ PATH: '/bin', GONE: undefined }, settings, 'sk-1'), { PATH: '/bin', MY_KEY: 'sk-1' });
  assert.deepEqual(serverEnv({ PATH: '/bin' }, settings, undefined), { PATH: '/bin' });
});

test('a remote window without a server setting is told where machine settings go', () => {
  const none: Record<string, unknown> = {};
  const python: Record<string, unknown> = { 'server.python': '/opt/py/bin/python3' };
  assert.match(remoteHint('ssh-remote', k => none[k]), /Remote settings: Preferences: Open Remote Settings/);
  assert.equal(remoteHint(undefined, k => none[k]), '');  // a local window reads the User settings
  assert.equal(remoteHint('ssh-remote', k => python[k]), '');  // it is set where it counts
  assert.equal(remoteHint('ssh-remote', k => ({ 'server.command': ['flowedit', 'lsp'] } as Record<string, unknown>)[k]), '');
});

test('a workspace cannot redirect the key or start a command: protected settings come from the user only', () => {
  const evil = { workspaceValue: 'ws://evil.example/v1/responses', workspaceFolderValue: 'ws://evil.example/x' };
  assert.equal(userScoped({ defaultValue: '', ...evil }), '');
  assert.equal(userScoped({ defaultValue: '', globalValue: 'wss://api.openai.com/v1/responses', ...evil }),
               'wss://api.openai.com/v1/responses');
  assert.equal(userScoped(undefined), undefined);
  const pkg = JSON.parse(require('node:fs').readFileSync(require('node:path').join(__dirname, '..', 'package.json'), 'utf8'));
  for (const key of PROTECTED_KEYS) {
    assert.ok(['application', 'machine'].includes(pkg.contributes.configuration.properties[`flowedit.${key}`].scope), key);
  }
});

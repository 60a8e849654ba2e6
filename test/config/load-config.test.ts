import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { defaultDataDir, loadConfig, parseListen } from '../../src/config/load-config.js';
import { configError } from './config-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'hookd-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
function configFile(doc: unknown): string {
  const file = join(dir, `config-${++n}.json`);
  writeFileSync(file, typeof doc === 'string' ? doc : JSON.stringify(doc));
  return file;
}

describe('loadConfig precedence: flags > HOOKD_* > config file > defaults', () => {
  const file = () =>
    configFile({
      listen: '10.0.0.1:1001',
      apiBase: '/from-file',
      logLevel: 'warn',
      bodyLimit: 2048,
      events: { enabled: false },
      allowCallbackNets: ['10.0.0.0/8'],
      dataDir: join(dir, 'file-data'),
    });
  const env = {
    HOOKD_LISTEN: '10.0.0.2:1002',
    HOOKD_API_BASE: '/from-env',
    HOOKD_BODY_LIMIT: '4096',
    HOOKD_EVENTS: 'true',
    HOOKD_ALLOW_CALLBACK_NET: '192.168.0.0/16, 172.16.0.0/12',
  };

  it('defaults apply when nothing is given', () => {
    const cfg = loadConfig({ env: {} });
    assert.deepEqual(cfg.listen, { host: '127.0.0.1', port: 8470 });
    assert.equal(cfg.apiBase, '/');
    assert.equal(cfg.eventsEnabled, true);
    assert.deepEqual(cfg.allowCallbackNets, []);
    assert.deepEqual(cfg.trustedProxies, []);
    assert.equal(cfg.bodyLimit, 1048576);
    assert.equal(cfg.logLevel, 'info');
    assert.equal(cfg.shutdownTimeoutMs, 10000);
    assert.equal(cfg.upstreamTimeoutMs, 60000);
    assert.equal(cfg.upstream, undefined);
    assert.equal(cfg.configFile, undefined);
    assert.equal(cfg.dataDir, join(homedir(), '.local', 'state', 'hookd'));
  });

  it('the config file overrides defaults', () => {
    const f = file();
    const cfg = loadConfig({ env: {}, flags: { config: f } });
    assert.deepEqual(cfg.listen, { host: '10.0.0.1', port: 1001 });
    assert.equal(cfg.apiBase, '/from-file');
    assert.equal(cfg.logLevel, 'warn');
    assert.equal(cfg.bodyLimit, 2048);
    assert.equal(cfg.eventsEnabled, false);
    assert.deepEqual(cfg.allowCallbackNets, ['10.0.0.0/8']);
    assert.equal(cfg.dataDir, join(dir, 'file-data'));
    assert.equal(cfg.configFile, resolve(f));
  });

  it('HOOKD_* variables override the config file; keys they do not set still come from it', () => {
    const cfg = loadConfig({ env: { ...env, HOOKD_CONFIG: file() } });
    assert.deepEqual(cfg.listen, { host: '10.0.0.2', port: 1002 });
    assert.equal(cfg.apiBase, '/from-env');
    assert.equal(cfg.bodyLimit, 4096);
    assert.equal(cfg.eventsEnabled, true);
    assert.deepEqual(cfg.allowCallbackNets, ['192.168.0.0/16', '172.16.0.0/12']);
    assert.equal(cfg.logLevel, 'warn');
  });

  it('flags override HOOKD_* variables and the config file', () => {
    const cfg = loadConfig({
      env: { ...env, HOOKD_CONFIG: file() },
      flags: {
        listen: '10.0.0.3:1003',
        apiBase: '/from-flag',
        bodyLimit: 8192,
        eventsEnabled: false,
        allowCallbackNets: ['fd00::/8'],
      },
    });
    assert.deepEqual(cfg.listen, { host: '10.0.0.3', port: 1003 });
    assert.equal(cfg.apiBase, '/from-flag');
    assert.equal(cfg.bodyLimit, 8192);
    assert.equal(cfg.eventsEnabled, false);
    assert.deepEqual(cfg.allowCallbackNets, ['fd00::/8']);
    assert.equal(cfg.logLevel, 'warn');
  });

  it('--config beats HOOKD_CONFIG', () => {
    const a = configFile({ logLevel: 'error' });
    const b = configFile({ logLevel: 'debug' });
    assert.equal(loadConfig({ env: { HOOKD_CONFIG: a }, flags: { config: b } }).logLevel, 'debug');
    assert.equal(loadConfig({ env: { HOOKD_CONFIG: a } }).logLevel, 'error');
  });

  it('an empty HOOKD_* variable counts as unset', () => {
    const cfg = loadConfig({ env: { HOOKD_LISTEN: '', HOOKD_CONFIG: file() } });
    assert.deepEqual(cfg.listen, { host: '10.0.0.1', port: 1001 });
  });

  it('HOOKD_EVENTS understands the usual spellings of true and false', () => {
    for (const v of ['0', 'false', 'no', 'off', 'FALSE']) {
      assert.equal(loadConfig({ env: { HOOKD_EVENTS: v } }).eventsEnabled, false, v);
    }
    for (const v of ['1', 'true', 'yes', 'on']) {
      assert.equal(loadConfig({ env: { HOOKD_EVENTS: v } }).eventsEnabled, true, v);
    }
  });
});

describe('loadConfig normalisation', () => {
  it('strips a trailing slash from apiBase and upstream', () => {
    const cfg = loadConfig({ env: {}, flags: { apiBase: '/api/', upstream: 'http://127.0.0.1:9000/' } });
    assert.equal(cfg.apiBase, '/api');
    assert.equal(cfg.upstream, 'http://127.0.0.1:9000');
  });

  it('makes dataDir absolute', () => {
    assert.equal(loadConfig({ env: {}, flags: { dataDir: 'rel/dir' } }).dataDir, resolve('rel/dir'));
  });

  it('parses every listen form', () => {
    assert.deepEqual(parseListen('127.0.0.1:8470'), { host: '127.0.0.1', port: 8470 });
    assert.deepEqual(parseListen('[::1]:80'), { host: '::1', port: 80 });
    assert.deepEqual(parseListen(':8080'), { host: '0.0.0.0', port: 8080 });
    assert.deepEqual(parseListen('localhost:0'), { host: 'localhost', port: 0 });
    for (const bad of ['8470', '1.2.3.4:65536', '::1:80', 'host:', 'a:b'])
      assert.equal(parseListen(bad), undefined, bad);
  });

  it('picks the data dir from STATE_DIRECTORY, then XDG_STATE_HOME, then the home directory', () => {
    assert.equal(
      defaultDataDir({ STATE_DIRECTORY: '/var/lib/hookd:/var/lib/other', XDG_STATE_HOME: '/x' }),
      '/var/lib/hookd',
    );
    assert.equal(defaultDataDir({ XDG_STATE_HOME: '/x' }), '/x/hookd');
    assert.equal(defaultDataDir({}), join(homedir(), '.local', 'state', 'hookd'));
    assert.equal(loadConfig({ env: { XDG_STATE_HOME: '/srv/state' } }).dataDir, '/srv/state/hookd');
  });
});

describe('loadConfig errors name the key and where it came from', () => {
  it('an unknown config file key, with a suggestion', () => {
    const f = configFile({ listn: '127.0.0.1:1' });
    const msg = configError(() => loadConfig({ env: {}, flags: { config: f } }));
    assert.match(msg, /unknown key "listn"/);
    assert.match(msg, /did you mean "listen"\?/);
    assert.ok(msg.includes(f), msg);
  });

  it('an unknown nested key, with a suggestion', () => {
    const f = configFile({ events: { enabeld: true } });
    const msg = configError(() => loadConfig({ env: {}, flags: { config: f } }));
    assert.match(msg, /unknown key "events\.enabeld"; did you mean "events\.enabled"\?/);
  });

  it('an unknown key that resembles nothing is still named', () => {
    const f = configFile({ frobnicate: 1 });
    assert.match(
      configError(() => loadConfig({ env: {}, flags: { config: f } })),
      /unknown key "frobnicate"/,
    );
  });

  it('$schema and $comment are allowed in the file', () => {
    const f = configFile({ $schema: 'x', $comment: 'y', logLevel: 'debug' });
    assert.equal(loadConfig({ env: {}, flags: { config: f } }).logLevel, 'debug');
  });

  const BAD: [string, Parameters<typeof loadConfig>[0], RegExp][] = [
    ['listen from a flag', { env: {}, flags: { listen: 'nope' } }, /^--listen: "nope" is not HOST:PORT/],
    ['listen from the environment', { env: { HOOKD_LISTEN: '1.2.3.4' } }, /^HOOKD_LISTEN: /],
    [
      'bodyLimit that is not a number',
      { env: { HOOKD_BODY_LIMIT: 'abc' } },
      /^HOOKD_BODY_LIMIT: must be a whole number/,
    ],
    [
      'bodyLimit below the minimum',
      { env: {}, flags: { bodyLimit: 10 } },
      /^--body-limit: must be a whole number from 1024/,
    ],
    ['logLevel', { env: { HOOKD_LOG_LEVEL: 'loud' } }, /^HOOKD_LOG_LEVEL: must be one of fatal, error/],
    [
      'apiBase without a leading slash',
      { env: {}, flags: { apiBase: 'api' } },
      /^--api-base: must be a path/,
    ],
    ['apiBase with //', { env: {}, flags: { apiBase: '/a//b' } }, /^--api-base: must be a path/],
    [
      'upstream that is not http',
      { env: {}, flags: { upstream: 'ftp://x' } },
      /^--upstream: "ftp:\/\/x" is not an absolute http/,
    ],
    [
      'events that is not a boolean',
      { env: { HOOKD_EVENTS: 'maybe' } },
      /^HOOKD_EVENTS: must be true or false/,
    ],
    [
      'shutdown timeout',
      { env: { HOOKD_SHUTDOWN_TIMEOUT_MS: '-1' } },
      /^HOOKD_SHUTDOWN_TIMEOUT_MS: must be a whole number/,
    ],
    [
      'publicBaseUrl',
      { env: {}, flags: { publicBaseUrl: 'example.com' } },
      /^--public-base-url: must be an absolute/,
    ],
  ];
  for (const [what, sources, re] of BAD) {
    it(what, () => {
      assert.match(
        configError(() => loadConfig(sources)),
        re,
      );
    });
  }

  it('a bad value in the config file names the file and the key', () => {
    const f = configFile({ bodyLimit: 'big', listen: '127.0.0.1:1' });
    const msg = configError(() => loadConfig({ env: {}, flags: { config: f } }));
    assert.equal(msg, `${f}: bodyLimit: must be a whole number from 1024 to 67108864`);
  });

  it('a list key given a non-list in the file', () => {
    const f = configFile({ allowCallbackNets: [1, 2] });
    assert.match(
      configError(() => loadConfig({ env: {}, flags: { config: f } })),
      /allowCallbackNets: must be a list of strings/,
    );
  });

  it('a config file that is missing, not JSON, or not an object', () => {
    assert.match(
      configError(() => loadConfig({ env: {}, flags: { config: join(dir, 'missing.json') } })),
      /cannot read config file .*missing\.json/,
    );
    const notJson = configFile('{ "listen": ');
    assert.match(
      configError(() => loadConfig({ env: {}, flags: { config: notJson } })),
      /is not valid JSON/,
    );
    const arr = configFile([1]);
    assert.match(
      configError(() => loadConfig({ env: {}, flags: { config: arr } })),
      /must hold a JSON object/,
    );
  });

  it('a flag fixes a bad value from a lower source (only the winning value is checked)', () => {
    const cfg = loadConfig({ env: { HOOKD_LISTEN: 'nope' }, flags: { listen: '127.0.0.1:1' } });
    assert.deepEqual(cfg.listen, { host: '127.0.0.1', port: 1 });
  });
});

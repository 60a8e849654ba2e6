import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { packageInfo } from '../../src/util/package-info.js';
import { HOOKD_BIN, tempDir } from '../helpers/hookd.js';
import { cleanEnv, runProcess } from '../hookctl/helpers.js';

// `hookd --version`, and `hookd check-config` reporting every problem of a file at once, with
// FILE:LINE:COLUMN for JSON syntax errors as `hookctl validate` reports a hook file.

const hookd = (args: string[]) => runProcess(process.execPath, [HOOKD_BIN, ...args], { env: cleanEnv() });

describe('hookd --version', () => {
  for (const flag of ['--version', '-V']) {
    it(`${flag} prints the version and exits 0`, async () => {
      const r = await hookd([flag]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout.trim(), packageInfo().version);
    });
  }
});

describe('hookd check-config', () => {
  it('lists every bad key at once, one line each, and exits 2', async () => {
    const f = join(tempDir('hookd-check-'), 'hookd.json');
    writeFileSync(
      f,
      JSON.stringify(
        {
          listn: '127.0.0.1:8470',
          bodyLimit: 'big',
          logLevel: 'loud',
          opsListen: 'nowhere',
          upstream: 'http://ok',
        },
        null,
        2,
      ),
    );
    const r = await hookd(['check-config', f]);
    assert.equal(r.code, 2, r.stdout);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 4, r.stderr);
    assert.match(r.stderr, /unknown key "listn"; did you mean "listen"\?/);
    assert.match(r.stderr, /bodyLimit: must be a whole number/);
    assert.match(r.stderr, /logLevel: must be one of/);
    assert.match(r.stderr, /opsListen: "nowhere" is not HOST:PORT/);
    for (const line of lines) assert.match(line, /^hookd: configuration error: /);
  });

  it('names bad network entries with the other problems', async () => {
    const f = join(tempDir('hookd-check-'), 'hookd.json');
    writeFileSync(
      f,
      JSON.stringify({ allowCallbackNets: ['10.0.0.0/99', '10.1.0.0/16', 'nope'], logLevel: 'x' }),
    );
    const r = await hookd(['check-config', f]);
    assert.equal(r.code, 2, r.stdout);
    assert.match(r.stderr, /10\.0\.0\.0\/99/);
    assert.match(r.stderr, /nope/);
    assert.match(r.stderr, /logLevel/);
    assert.doesNotMatch(r.stderr, /10\.1\.0\.0\/16/);
  });

  it('reports a JSON syntax error as FILE:LINE:COLUMN, like hookctl validate', async () => {
    const f = join(tempDir('hookd-check-'), 'hookd.json');
    writeFileSync(
      f,
      '{\n  "listen": "127.0.0.1:8470",\n  "logLevel": "info",\n  "upstream": "http://x",\n}\n',
    );
    const r = await hookd(['check-config', f]);
    assert.equal(r.code, 2, r.stdout);
    assert.match(r.stderr, new RegExp(`${f.replace(/[.]/g, '\\.')}:5:1: `), r.stderr);
    assert.match(r.stderr, /trailing comma/);
    assert.doesNotMatch(r.stderr, /position \d+/);
  });

  it('a valid file: exit 0', async () => {
    const f = join(tempDir('hookd-check-'), 'hookd.json');
    writeFileSync(f, JSON.stringify({ opsListen: 'off', logFormat: 'json', listen: '127.0.0.1:9' }));
    const r = await hookd(['check-config', f]);
    assert.equal(r.code, 0, r.stderr);
  });

  it('a daemon start reports every problem too', async () => {
    const r = await hookd(['--body-limit', 'x', '--log-level', 'loud', '--data-dir', tempDir()]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--body-limit/);
    assert.match(r.stderr, /--log-level/);
  });
});

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { tempDir } from '../helpers/hookd.js';
import { cleanEnv, closedPort, runInProcess } from './helpers.js';

// Usage errors never reach a server: they are found while parsing or validating the command
// line. HOOKD_URL points at a closed port so that a case that wrongly went on would exit 3, not 2.

let env: NodeJS.ProcessEnv;

before(async () => {
  env = cleanEnv({ HOOKD_URL: `http://127.0.0.1:${await closedPort()}`, HOOKD_TOKEN: 'hkd_unused' });
});

const CASES: [string, string[]][] = [
  ['an unknown command', ['frobnicate']],
  ['create without -f', ['create']],
  ['an unknown output format', ['list', '-o', 'yaml']],
  ['an unknown option', ['list', '--bogus']],
  ['get without an Id', ['get']],
  ['replace without -f', ['hooks', 'replace', 'hk_x']],
  ['a hook file that does not exist', ['create', '-f', join(tempDir(), 'does-not-exist.json')]],
  ['a directory as hook file', ['create', '-f', tempDir()]],
  ['match without a path', ['match', 'GET']],
  ['match with a method that is not a token', ['match', 'G E T', '/x']],
  ['match with a relative path', ['match', 'GET', 'no-slash']],
  ['match with a status below 100', ['match', 'GET', '/x', '--status', '99']],
  ['match with a status that is not a number', ['match', 'GET', '/x', '--status', 'ok']],
  ['deliveries without a hook', ['deliveries']],
  ['deliveries with an unknown status', ['deliveries', 'hk_x', '--status', 'lost']],
  ['deliveries with a --since that is not ISO 8601', ['deliveries', 'hk_x', '--since', 'yesterday']],
  ['deliveries with --limit 0', ['deliveries', 'hk_x', '--limit', '0']],
  ['redeliver with neither Id nor --hook', ['redeliver']],
  ['redeliver with both Id and --hook', ['redeliver', 'msg_x', '--hook', 'hk_x']],
  ['redeliver with a filter but no --hook', ['redeliver', 'msg_x', '--status', 'failed']],
  ['redeliver with a bad --since', ['redeliver', '--hook', 'hk_x', '--since', 'soon']],
  ['redeliver with an unknown status', ['redeliver', '--hook', 'hk_x', '--status', 'nope']],
  ['tail with an unknown status class', ['tail', '--status', '1xx']],
  ['tail with --hook but no Id', ['tail', '--hook']],
  ['reload with an argument', ['reload', 'now']],
  ['completion without a shell', ['completion']],
  ['completion for an unknown shell', ['completion', 'powershell']],
  ['profile use without a name', ['profile', 'use']],
  ['profile without a subcommand', ['profile']],
  ['hooks without a subcommand', ['hooks']],
  ['--server that is not a URL', ['--server', 'not a url', 'list']],
  ['--server with another scheme', ['--server', 'ftp://127.0.0.1/', 'list']],
  ['--server with credentials in it', ['--server', 'http://u:p@127.0.0.1/', 'list']],
  ['validate without -f', ['validate']],
  ['login with an invalid profile name', ['--profile', '../x', 'login']],
];

describe('hookctl usage errors exit 2 without contacting a server', () => {
  for (const [what, args] of CASES) {
    it(what, async () => {
      const r = await runInProcess(args, { env, tty: false });
      assert.equal(r.code, 2, `hookctl ${args.join(' ')}\n${r.stderr}`);
      assert.match(r.stderr, /error|usage/i);
      assert.equal(r.stdout, '');
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
    });
  }

  it('a usage error names the problem and points at --help', async () => {
    const r = await runInProcess(['list', '-o', 'yaml'], { env, tty: false });
    assert.match(r.stderr, /argument 'yaml' is invalid\. Allowed choices are table, wide, json/);
    assert.match(r.stderr, /--help/);
  });

  it('bare hookctl prints the help on stdout and exits 0 (as gh and kubectl do)', async () => {
    const r = await runInProcess([], { env, tty: false });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^Usage: hookctl/m);
    assert.equal(r.stderr, '');
  });

  it('help is not an error: exit 0 on stdout', async () => {
    for (const args of [['--help'], ['hooks', '--help'], ['tail', '--help'], ['help', 'create']]) {
      const r = await runInProcess(args, { env, tty: false });
      assert.equal(r.code, 0, args.join(' '));
      assert.match(r.stdout, /^Usage: hookctl/m);
    }
  });
});

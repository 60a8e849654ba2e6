import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startHookd, type TestDaemon, tempDir } from '../helpers/hookd.js';
import { addUser } from '../helpers/servers.js';
import { cleanEnv, runInProcess } from './helpers.js';

// What a newcomer meets in hookctl's messages, on a terminal and
// piped, against a real hookd (whose upstream answers HTML, as most web apps do).

let daemon: TestDaemon;
let upstream: Server;
let env: NodeJS.ProcessEnv;
let aliceEnv: NodeJS.ProcessEnv;
const dir = tempDir('hookctl-first-hour-');

before(async () => {
  upstream = createServer((_req, res) =>
    res
      .writeHead(404, { 'content-type': 'text/html' })
      .end('<!doctype html><html><body><h1>Not Found</h1></body></html>'),
  );
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  daemon = await startHookd({ upstream: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}` });
  env = cleanEnv({ HOOKD_URL: daemon.url, HOOKD_TOKEN: daemon.token });
  const aliceToken = await addUser(daemon, 'alice', ['own']);
  aliceEnv = cleanEnv({ HOOKD_URL: daemon.url, HOOKD_TOKEN: aliceToken });
});

after(async () => {
  await daemon.close();
  await new Promise<void>((r) => upstream.close(() => r()));
});

const both = [true, false] as const;

describe('hookctl match --user (item 5)', () => {
  before(async () => {
    const file = join(dir, 'own.json');
    writeFileSync(
      file,
      JSON.stringify({ PathPattern: '/items/*', Methods: ['GET'], Callback: 'http://127.0.0.1:9/cb' }),
    );
    const r = await runInProcess(['create', '-f', file], { env: aliceEnv, tty: false });
    assert.equal(r.code, 0, r.stderr);
  });

  for (const tty of both) {
    it(`an "own" hook fires only with --user of its owner, and an empty answer says why (${tty ? 'TTY' : 'piped'})`, async () => {
      const anon = await runInProcess(['match', 'GET', '/items/1'], { env: aliceEnv, tty });
      assert.equal(anon.code, 0, anon.stderr);
      assert.equal(anon.stdout, '');
      if (tty) {
        assert.match(anon.stderr, /no hook would fire for GET \/items\/1 made anonymously/);
        assert.match(anon.stderr, /scope "own" fires only for requests its owner makes; .*--user NAME/);
      } else assert.equal(anon.stderr, '', 'piped: nothing but the (empty) answer');
      const mine = await runInProcess(['match', 'GET', '/items/1', '--user', 'alice', '-o', 'json'], {
        env: aliceEnv,
        tty,
      });
      assert.equal(mine.code, 0, mine.stderr);
      assert.equal((JSON.parse(mine.stdout) as unknown[]).length, 1);
      const other = await runInProcess(['match', 'GET', '/items/1', '--user', 'bob', '-o', 'json'], {
        env: aliceEnv,
        tty,
      });
      // A dry run in another user's name needs the report permission (403).
      assert.notEqual(other.code, 0, other.stderr);
      assert.match(other.stderr, /must be "alice" or left out/);
      assert.match(other.stderr, /--permission report/);
    });
  }
});

describe('hookctl replace twice from one file (item 7)', () => {
  for (const tty of both) {
    it(`the second replace is a no-op, not a 412 (${tty ? 'TTY' : 'piped'})`, async () => {
      const file = join(dir, `h-${tty}.json`);
      writeFileSync(
        file,
        JSON.stringify({ PathPattern: '/r/*', Methods: ['GET'], Callback: 'http://127.0.0.1:9/cb' }),
      );
      const id = (await runInProcess(['create', '-f', file], { env, tty: false })).stdout.trim();
      const got = await runInProcess(['get', id, '-o', 'json'], { env, tty: false });
      const doc = JSON.parse(got.stdout) as Record<string, unknown>;
      doc.Methods = ['GET', 'HEAD'];
      writeFileSync(file, JSON.stringify(doc));
      const first = await runInProcess(['replace', id, '-f', file], { env, tty });
      assert.equal(first.code, 0, first.stderr);
      const second = await runInProcess(['replace', id, '-f', file], { env, tty });
      assert.equal(second.code, 0, second.stderr);
      assert.equal(second.stdout.trim(), id);
      if (tty) assert.match(second.stderr, /already matches .*nothing to replace/);
      // A real conflict is still refused, and said once.
      const changed = { ...doc, Methods: ['GET'] };
      writeFileSync(file, JSON.stringify(changed));
      const third = await runInProcess(['replace', id, '-f', file], { env, tty });
      assert.equal(third.code, 1);
      const errorLines = third.stderr.split('\n').filter((l) => l.includes('error:'));
      assert.equal(errorLines.length, 1, third.stderr);
      assert.match(third.stderr, /was changed on the server after .* was read\n/);
      assert.equal((third.stderr.match(/changed/g) ?? []).length, 1, `said once: ${third.stderr}`);
    });
  }
});

describe('rough messages (item 12)', () => {
  for (const tty of both) {
    const mode = tty ? 'TTY' : 'piped';
    it(`a misspelt notification event: one line and a "did you mean" (${mode})`, async () => {
      const r = await runInProcess(
        ['notifications', 'add', 'https://example.com/n', '--events', 'hook.disbled'],
        {
          env,
          tty,
        },
      );
      assert.equal(r.code, 1);
      const text = r.stderr.replace(/\u001b\[[0-9;]*m/g, '');
      assert.equal((text.match(/must be/g) ?? []).length, 1, `printed once: ${text}`);
      assert.match(text, /did you mean hook\.disabled\?/);
      assert.equal((text.match(/did you mean/g) ?? []).length, 1, `the suggestion said once: ${text}`);
      assert.doesNotMatch(text, /^hint:/m, 'no hint line repeating the error');
    });

    it(`users grant with a scope that is not one names it, not the combined list (${mode})`, async () => {
      await runInProcess(['users', 'add', `carol${tty}`], { env, tty: false });
      const r = await runInProcess(['users', 'grant', `carol${tty}`, 'repositories/x'], { env, tty });
      assert.equal(r.code, 2, r.stderr);
      const text = r.stderr.replace(/\u001b\[[0-9;]*m/g, '');
      assert.match(text, /"repositories\/x" is not a scope/);
      assert.match(text, /did you mean \/repositories\/x\?/);
      assert.doesNotMatch(text, /Scopes|\[1\]/);
    });

    it(`--server with a wrong API base does not print the upstream's HTML (${mode})`, async () => {
      const r = await runInProcess(['--server', `${daemon.url}/api`, 'list'], { env, tty });
      assert.equal(r.code, 1);
      assert.doesNotMatch(r.stderr, /<html|<h1|doctype/i);
      assert.match(r.stderr, /an HTML page .*not hookd's API/);
      assert.match(r.stderr, /--api-base/);
    });

    it(`--server at the operations port says where the API is (${mode})`, async () => {
      const r = await runInProcess(['--server', daemon.opsUrl, 'list'], { env, tty });
      assert.equal(r.code, 1);
      assert.match(r.stderr, /operations listener/);
      assert.match(r.stderr, /the API is on its main listener \(--listen/);
    });
  }
});

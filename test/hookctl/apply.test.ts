import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startHookd, type TestDaemon, tempDir } from '../helpers/hookd.js';
import { createHook } from '../helpers/servers.js';
import { ANSI, assertBuilt, cleanEnv, hookctl, runInProcess } from './helpers.js';

// `hookctl apply` / `hookctl diff` against a real hookd, spawned and in-process.

let d: TestDaemon;
let env: NodeJS.ProcessEnv;
let dir: string;

const hookFile = (name: string, over: Record<string, unknown> = {}) => ({
  Name: name,
  PathPattern: `/${name}/(*)`,
  Methods: ['post'],
  Callback: `http://127.0.0.1:9/${name}`,
  ...over,
});

function write(file: string, doc: unknown): void {
  writeFileSync(join(dir, file), `${JSON.stringify(doc, null, 2)}\n`);
}

async function api<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${d.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${d.token}`,
      ...(body !== undefined && { 'content-type': 'application/json' }),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
}

before(async () => {
  assertBuilt();
  d = await startHookd();
  env = cleanEnv({ HOOKD_URL: d.url, HOOKD_TOKEN: d.token });
  dir = tempDir('hookd-apply-');
});

after(async () => {
  await d.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('hookctl apply and diff', () => {
  it('apply creates, a second apply changes nothing (exit 0 vs 1); a changed file is replaced; diff shows it', async () => {
    write('a.json', hookFile('alpha'));
    write('b.json', [hookFile('beta'), hookFile('gamma', { Type: 0 })]);
    const first = await hookctl(['apply', '-f', dir], { env });
    assert.equal(first.code, 1, first.stderr);
    assert.equal(first.stdout, 'hook/alpha created\nhook/beta created\nhook/gamma created\n');

    const second = await hookctl(['apply', '-f', dir], { env });
    assert.equal(second.code, 0, second.stderr);
    assert.equal(second.stdout, 'hook/alpha unchanged\nhook/beta unchanged\nhook/gamma unchanged\n');
    const same = await hookctl(['diff', '-f', dir], { env });
    assert.equal(same.code, 0, same.stderr);
    assert.equal(same.stdout, '');

    const alpha = (await api<{ Id: string; Modified: string }>('GET', '/hooks/alpha')).body;
    write('a.json', hookFile('alpha', { Methods: ['POST', 'PUT'] }));
    const diff = await hookctl(['diff', '-f', dir], { env });
    assert.equal(diff.code, 1, diff.stderr);
    assert.match(diff.stdout, new RegExp(`^--- hook/alpha \\(live ${alpha.Id}\\)$`, 'm'));
    assert.match(diff.stdout, /^-\s+"POST"\n\+\s+"POST",\n\+\s+"PUT"$/m);
    assert.match(diff.stdout, /^@@ -\d+,\d+ \+\d+,\d+ @@$/m);
    assert.doesNotMatch(diff.stdout, /beta|gamma/);

    const dry = await hookctl(['apply', '-f', dir, '--dry-run'], { env });
    assert.equal(dry.code, 1);
    assert.match(dry.stdout, /^hook\/alpha configured \(dry run\)$/m);
    assert.equal((await api<{ Modified: string }>('GET', '/hooks/alpha')).body.Modified, alpha.Modified);

    const third = await hookctl(['apply', '-f', dir], { env });
    assert.equal(third.code, 1, third.stderr);
    assert.match(third.stdout, /^hook\/alpha configured$/m);
    assert.match(third.stdout, /^hook\/beta unchanged$/m);
    const now = (await api<{ Id: string; Methods: string[] }>('GET', '/hooks/alpha')).body;
    assert.equal(now.Id, alpha.Id, 'replaced in place, same Id');
    assert.deepEqual(now.Methods, ['POST', 'PUT']);
  });

  it('--prune removes exactly the dropped named hook, never an unnamed one', async () => {
    const unnamed = await createHook(d, {
      PathPattern: '/unnamed',
      Methods: ['GET'],
      Callback: 'http://127.0.0.1:9/u',
    });
    write('b.json', [hookFile('beta')]);
    const dry = await hookctl(['apply', '-f', dir, '--prune', '--dry-run'], { env });
    assert.equal(dry.code, 1, dry.stderr);
    assert.match(dry.stdout, /^hook\/gamma pruned \(dry run\)$/m);
    assert.equal((await api('GET', '/hooks/gamma')).status, 200);
    const pruned = await hookctl(['apply', '-f', dir, '--prune'], { env });
    assert.equal(pruned.code, 1, pruned.stderr);
    assert.equal(pruned.stdout, 'hook/alpha unchanged\nhook/beta unchanged\nhook/gamma pruned\n');
    assert.equal((await api('GET', '/hooks/gamma')).status, 404);
    assert.equal((await api('GET', `/hooks/${unnamed.Id}`)).status, 200);
    const again = await hookctl(['apply', '-f', dir, '--prune'], { env });
    assert.equal(again.code, 0, again.stderr);
  });

  it('a file without Name is a usage error naming the file (exit 2); -o json reports the plan', async () => {
    const bad = join(dir, 'nameless.json');
    writeFileSync(
      bad,
      JSON.stringify({ PathPattern: '/x', Methods: ['GET'], Callback: 'http://127.0.0.1:9/x' }),
    );
    try {
      const r = await hookctl(['apply', '-f', bad], { env });
      assert.equal(r.code, 2);
      assert.match(r.stderr, new RegExp(`${bad.replaceAll('/', '\\/')}: the hook has no Name`));
    } finally {
      rmSync(bad);
    }
    const json = await runInProcess(['apply', '-f', dir, '-o', 'json', '--dry-run'], { env, tty: false });
    assert.equal(json.code, 0, json.stderr);
    const plan = JSON.parse(json.stdout) as { Name: string; Action: string }[];
    assert.deepEqual(
      plan.map((p) => [p.Name, p.Action]),
      [
        ['alpha', 'unchanged'],
        ['beta', 'unchanged'],
      ],
    );
  });

  it('diff on a terminal is coloured; piped it is plain', async () => {
    write('b.json', [hookFile('beta', { Persist: false })]);
    const tty = await runInProcess(['diff', '-f', dir], { env, tty: true });
    assert.equal(tty.code, 1, tty.stderr);
    assert.match(tty.stdout, ANSI);
    const piped = await runInProcess(['diff', '-f', dir], { env, tty: false });
    assert.equal(piped.code, 1);
    assert.doesNotMatch(piped.stdout, ANSI);
    assert.match(piped.stdout, /^-\s+"Persist": true,\n\+\s+"Persist": false,$/m);
  });

  it('a change made on the server between apply reading a hook and replacing it is refused (412, exit 5), not overwritten', async () => {
    write('b.json', [hookFile('beta', { Headers: { 'X-From': 'git' } })]);
    // A proxy in front of hookd: when apply's PUT comes, someone else's edit lands first.
    const upstream = new URL(d.url);
    const proxy: Server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        if (req.method === 'PUT') {
          const current = (await api<Record<string, unknown>>('GET', '/hooks/beta')).body;
          const edited = await api('PUT', '/hooks/beta', { ...current, Headers: { 'X-From': 'console' } });
          assert.equal(edited.status, 200);
        }
        const fwd = request(
          {
            host: upstream.hostname,
            port: upstream.port,
            method: req.method,
            path: req.url,
            headers: req.headers,
          },
          (up) => {
            res.writeHead(up.statusCode ?? 502, up.headers);
            up.pipe(res);
          },
        );
        fwd.end(Buffer.concat(chunks));
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const via = cleanEnv({
        HOOKD_URL: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
        HOOKD_TOKEN: d.token,
      });
      const r = await hookctl(['apply', '-f', dir], { env: via });
      assert.equal(r.code, 5, r.stderr);
      assert.match(r.stderr, /hook\/beta .*changed since the copy/);
      assert.match(
        r.stderr,
        /hint: hook\/beta was changed on the server after apply read it; nothing was overwritten/,
      );
      const beta = (await api<{ Headers: Record<string, string> }>('GET', '/hooks/beta')).body;
      assert.deepEqual(beta.Headers, { 'X-From': 'console' });
    } finally {
      proxy.closeAllConnections();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    }
  });

  it('a hook the server refuses fails with exit 5 naming it and its file; the others are applied', async () => {
    const sub = join(dir, 'sub');
    mkdirSync(sub);
    writeFileSync(
      join(sub, 'x.json'),
      JSON.stringify([hookFile('ok-one'), hookFile('bad-one', { Methods: [] })]),
    );
    const r = await hookctl(['apply', '-f', sub], { env });
    assert.equal(r.code, 5, r.stderr);
    assert.match(r.stdout, /^hook\/ok-one created$/m);
    assert.match(r.stderr, /hook\/bad-one \(.*x\.json\[1\]\)/);
    assert.match(r.stderr, /Methods: must list at least one method/);
  });
});

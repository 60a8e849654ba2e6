import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, afterEach, before, describe, it } from 'node:test';
import { type WebSocket, WebSocketServer } from 'ws';
import { startHookd, type TestDaemon, tempDir } from '../helpers/hookd.js';
import { createHook, type Receiver, startReceiver } from '../helpers/servers.js';
import { until } from '../helpers/until.js';
import { assertBuilt, cleanEnv, closedPort, HOOKCTL_BIN, startStreaming } from './helpers.js';

// `hookctl tail` against a real hookd (API base /api): real hooks fire through POST /report, a
// real receiver answers 200, 500 or 410, and the daemon streams the attempts. Only the last
// block uses a stand-in server, for frames a real hookd sends only under load.

/** Runs `hookctl tail` in-process; `interrupt()` plays the part of Ctrl-C. */
function startTail(args: string[], opts: { env: NodeJS.ProcessEnv; tty: boolean }) {
  return startStreaming('tail', args, opts);
}

let d: TestDaemon;
let receiver: Receiver;
let env: NodeJS.ProcessEnv;
let serial = 0;
/** Hooks made by the current test: deleted after it, so that their retries cannot reach the next one. */
let made: string[] = [];

/** A hook of its own (a fresh path) whose callbacks get `status` from the receiver. */
async function hookTo(cb: '/ok' | '/retry' | '/gone'): Promise<{ id: string; path: string }> {
  const path = `/t${++serial}`;
  const hook = await createHook(
    d,
    { PathPattern: path, Methods: ['GET'], Callback: receiver.url + cb },
    { apiBase: '/api' },
  );
  made.push(hook.Id);
  return { id: hook.Id, path };
}

async function fire(...paths: string[]): Promise<void> {
  const res = await fetch(`${d.url}/api/_hookd/report`, {
    method: 'POST',
    headers: { authorization: `Bearer ${d.token}`, 'content-type': 'application/json' },
    body: JSON.stringify(paths.map((Path) => ({ Method: 'GET', Path, StatusCode: 200, Phase: 'after' }))),
  });
  assert.equal(res.status, 202, await res.text());
}

/** Waits until the delivery log has an attempt for every delivery of each hook, and at least one. */
async function attempted(...ids: string[]): Promise<void> {
  for (const id of ids) {
    await until(`an attempt for ${id}`, async () => {
      const res = await fetch(`${d.url}/api/hooks/${id}/deliveries`, {
        headers: { authorization: `Bearer ${d.token}` },
      });
      const list = (await res.json()) as { Attempts: number }[];
      return list.length > 0 && list.every((x) => x.Attempts >= 1);
    });
  }
}

/**
 * Proves that the stream has carried everything of the hooks in `ids` instead of waiting a fixed
 * time: once their attempts are in the delivery log, a marker hook (one the tail prints) is fired,
 * and its line, which the stream delivers after theirs, is waited for. Returns the lines before it.
 */
async function drained(
  tail: { stdout: { waitFor(p: RegExp): Promise<string> } },
  marker: string,
  markerPath: string,
  ids: string[],
): Promise<string[]> {
  await attempted(...ids);
  await fire(markerPath);
  const text = await tail.stdout.waitFor(new RegExp(marker));
  return text
    .trim()
    .split('\n')
    .filter((l) => !l.includes(marker));
}

before(async () => {
  // Answers by callback path: /ok 200, /retry 500, /gone 410.
  receiver = await startReceiver({
    reply: (c) => ({ status: c.url === '/retry' ? 500 : c.url === '/gone' ? 410 : 200 }),
  });
  d = await startHookd({ apiBase: '/api' });
  env = cleanEnv({ HOOKD_URL: `${d.url}/api`, HOOKD_TOKEN: d.token });
});

after(async () => {
  await d.close();
  await receiver.close();
});

describe('hookctl tail against hookd', () => {
  afterEach(async () => {
    for (const id of made) {
      const res = await fetch(`${d.url}/api/hooks/${id}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${d.token}` },
      });
      assert.equal(res.status, 204);
    }
    made = [];
  });

  it('--hook and --status select what is streamed; -o json prints one JSON line per event; Ctrl-C exits 0', async () => {
    const a = await hookTo('/ok');
    const b = await hookTo('/retry');
    const c = await hookTo('/retry');
    const m = await hookTo('/retry');
    const tail = startTail(
      ['--hook', a.id, '--hook', b.id, '--hook', m.id, '--status', 'failed', '-o', 'json'],
      {
        env,
        tty: false,
      },
    );
    await tail.stderr.waitFor(/^Ready! Streaming callbacks from .*\/api \(Ctrl-C to quit\)$/m);
    await fire(a.path, b.path, c.path);
    await tail.stdout.waitFor(new RegExp(b.id));
    const lines = await drained(tail, m.id, m.path, [a.id, b.id, c.id]);
    // a succeeded (not "failed"), c is not among --hook, fired events are not attempts.
    assert.equal(lines.length, 1, tail.stdout.text());
    const e = JSON.parse(lines[0]!) as Record<string, unknown>;
    assert.equal(e.kind, 'attempt');
    assert.equal(e.HookId, b.id);
    assert.equal(e.Outcome, 'retrying');
    assert.equal(e.StatusCode, 500);
    assert.deepEqual(e.Trigger, {
      Kind: 'request',
      Method: 'GET',
      Path: b.path,
      StatusCode: 200,
      User: null,
    });
    tail.interrupt();
    assert.equal(await tail.done, 0);
  });

  it('-o json without filters prints every event, fired and attempt, as compact NDJSON', async () => {
    const a = await hookTo('/ok');
    const tail = startTail(['-o', 'json'], { env, tty: false });
    await tail.stderr.waitFor(/Ready!/);
    await fire(a.path);
    await tail.stdout.waitFor(/"kind":"attempt"/);
    const events = tail.stdout
      .text()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(
      events.map((e) => e.kind),
      ['fired', 'attempt'],
    );
    assert.equal(events[0]!.DeliveryId, events[1]!.DeliveryId);
    tail.interrupt();
    assert.equal(await tail.done, 0);
  });

  it('table mode: one line per attempt, coloured by outcome on a terminal', async () => {
    const ok = await hookTo('/ok');
    const retry = await hookTo('/retry');
    const gone = await hookTo('/gone');
    const m = await hookTo('/ok');
    const tail = startTail([], { env, tty: true });
    await tail.stderr.waitFor(/Ready!/);
    await fire(ok.path, retry.path, gone.path);
    await tail.stdout.waitFor(/(.*\n){3}/);
    const lines = await drained(tail, m.id, m.path, [ok.id, retry.id, gone.id]);
    assert.equal(lines.length, 3, 'fired events are not lines of their own in table mode');
    const plain = (l: string) => l.replace(/\u001b\[[0-9;]*m/g, '');
    const line = (id: string) => lines.find((l) => l.includes(id))!;
    assert.match(
      plain(line(ok.id)),
      new RegExp(
        `^\\d\\d:\\d\\d:\\d\\d {2}${ok.id} {2}GET ${ok.path} \\[200\\] {2}<-- 200 {2}\\d+(\\.\\d)?ms$`,
      ),
    );
    assert.match(plain(line(retry.id)), /\[200\] {2}<-- 500 \(retrying\) {2}\d+(\.\d)?ms$/);
    assert.match(plain(line(gone.id)), /\[200\] {2}<-- 410 \(failed\) {2}\d+(\.\d)?ms$/);
    assert.ok(line(ok.id).startsWith('\u001b[32m'), 'succeeded is green');
    assert.ok(line(retry.id).startsWith('\u001b[33m'), 'retrying is yellow');
    assert.ok(line(gone.id).startsWith('\u001b[31m'), 'failed is red');
    tail.interrupt();
    assert.equal(await tail.done, 0);
  });

  it('NO_COLOR: the same lines without colour', async () => {
    const retry = await hookTo('/retry');
    const tail = startTail([], { env: { ...env, NO_COLOR: '1' }, tty: true });
    await tail.stderr.waitFor(/Ready!/);
    await fire(retry.path);
    await tail.stdout.waitFor(/<-- 500/);
    assert.doesNotMatch(tail.stdout.text(), /\u001b\[/);
    tail.interrupt();
    assert.equal(await tail.done, 0);
  });

  it('reconnects when hookd restarts on the same address and keeps streaming', async () => {
    const dataDir = tempDir();
    const port = await closedPort();
    const start = () => startHookd({ listen: { host: '127.0.0.1', port } }, { dataDir });
    let own = await start();
    const ownEnv = cleanEnv({ HOOKD_URL: own.url, HOOKD_TOKEN: own.token });
    const hook = await createHook(own, {
      PathPattern: '/again',
      Methods: ['GET'],
      Callback: `${receiver.url}/ok`,
    });
    const tail = startTail(['-o', 'json'], { env: ownEnv, tty: false });
    try {
      await tail.stderr.waitFor(/Ready!/);
      await own.close();
      await tail.stderr.waitFor(/reconnecting…/);
      own = await start();
      await tail.stderr.waitFor(/reconnected/);
      const res = await fetch(`${own.url}/_hookd/report`, {
        method: 'POST',
        headers: { authorization: `Bearer ${own.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ Method: 'GET', Path: '/again/1', StatusCode: 200 }),
      });
      assert.equal(res.status, 202);
      await tail.stdout.waitFor(/"kind":"attempt"/);
      assert.match(tail.stdout.text(), new RegExp(hook.Id));
    } finally {
      tail.interrupt();
      assert.equal(await tail.done, 0);
      await own.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('exit 4 when hookd refuses the token on the upgrade', async () => {
    const r = startTail([], { env: { ...env, HOOKD_TOKEN: 'hkd_000000000000_wrong' }, tty: false });
    assert.equal(await r.done, 4);
    assert.match(r.stderr.text(), /the bearer token is not valid/);
  });

  it('exit 1 with the problem detail when events are switched off', async () => {
    const off = await startHookd({ eventsEnabled: false });
    try {
      const r = startTail([], { env: { ...env, HOOKD_URL: off.url, HOOKD_TOKEN: off.token }, tty: false });
      assert.equal(await r.done, 1);
      assert.match(r.stderr.text(), /^error: .*events are disabled/m);
    } finally {
      await off.close();
    }
  });

  it('exit 1 when the server has no tail endpoint there (a wrong API base)', async () => {
    const r = startTail([], { env: { ...env, HOOKD_URL: `${d.url}/other` }, tty: false });
    assert.equal(await r.done, 1);
    assert.match(r.stderr.text(), /HTTP 404/);
    assert.match(r.stderr.text(), /API base path/);
  });

  it('exit 3 when hookd is not there at all', async () => {
    const port = await closedPort();
    const r = startTail([], { env: { ...env, HOOKD_URL: `http://127.0.0.1:${port}` }, tty: false });
    assert.equal(await r.done, 3);
    assert.match(r.stderr.text(), new RegExp(`cannot reach hookd at http://127\\.0\\.0\\.1:${port}`));
  });

  it('the real binary exits 0 on SIGINT', async () => {
    assertBuilt();
    const child = spawn(process.execPath, [HOOKCTL_BIN, 'tail'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    while (!stderr.includes('Ready!')) await once(child.stderr, 'data');
    child.kill('SIGINT');
    const [code, signal] = await exited;
    assert.equal(signal, null, stderr);
    assert.equal(code, 0, stderr);
  });
});

describe('hookctl tail: frames a real hookd sends only under load (stand-in server)', () => {
  let server: Server;
  let wss: WebSocketServer;
  let url = '';
  const sockets: WebSocket[] = [];

  before(async () => {
    wss = new WebSocketServer({ noServer: true });
    server = createServer((_req, res) => res.writeHead(404).end());
    server.on('upgrade', (req, socket, head) =>
      wss.handleUpgrade(req, socket, head, (ws) => {
        sockets.push(ws);
        wss.emit('client', ws);
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(async () => {
    for (const ws of wss.clients) ws.terminate();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const connection = async (n: number): Promise<WebSocket> => {
    while (sockets.length < n) await once(wss, 'client');
    return sockets[n - 1]!;
  };

  it('-o json re-serialises each frame to one line, the dropped notice included', async () => {
    const n = sockets.length;
    const tail = startTail(['-o', 'json'], {
      env: cleanEnv({ HOOKD_URL: url, HOOKD_TOKEN: 't' }),
      tty: false,
    });
    const ws = await connection(n + 1);
    await tail.stderr.waitFor(/Ready!/);
    const events = [
      { kind: 'fired', HookId: 'hk_a', DeliveryId: 'msg_1', Trigger: { Method: 'GET', Path: '/x' } },
      { kind: 'dropped', Count: 3 },
    ];
    // Pretty-printed on purpose: the client must still write exactly one line per event.
    for (const e of events) ws.send(JSON.stringify(e, null, 2));
    await tail.stdout.waitFor(/"dropped"/);
    assert.deepEqual(
      tail.stdout
        .text()
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
      events,
    );
    tail.interrupt();
    assert.equal(await tail.done, 0);
  });

  it('table mode warns on stderr how many events were skipped', async () => {
    const n = sockets.length;
    const tail = startTail([], { env: cleanEnv({ HOOKD_URL: url, HOOKD_TOKEN: 't' }), tty: true });
    const ws = await connection(n + 1);
    await tail.stderr.waitFor(/Ready!/);
    ws.send(JSON.stringify({ kind: 'dropped', Count: 2 }));
    await tail.stderr.waitFor(/2 events were skipped/);
    assert.equal(tail.stdout.text(), '');
    tail.interrupt();
    assert.equal(await tail.done, 0);
  });
});

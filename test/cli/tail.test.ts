import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { EventEmitter, once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type WebSocket, WebSocketServer } from 'ws';
import type { CliDeps } from '../../src/cli/context.js';
import { runCli } from '../../src/cli/main.js';
import { assertBuilt, cleanEnv, closedPort, fakeStdin, HOOKCTL_BIN, Sink } from './helpers.js';

// hookd's side of the live tail is not wired into the daemon yet, so these tests run the client
// against a small WebSocket server that speaks docs/API.md's "Live tail" contract. Replace it by a
// real hookd once GET /tail is served.

const TOKEN = 'hkd_tail_test_token';

class TailFixture extends EventEmitter {
  readonly server: Server;
  readonly wss = new WebSocketServer({ noServer: true });
  readonly upgrades: IncomingMessage[] = [];
  readonly sockets: WebSocket[] = [];
  url = '';

  constructor() {
    super();
    this.server = createServer((_req, res) => res.writeHead(404).end());
    this.server.on('upgrade', (req, socket, head) => {
      this.upgrades.push(req);
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname !== '/api/tail' || req.headers.authorization !== `Bearer ${TOKEN}`) {
        const status = url.pathname !== '/api/tail' ? 404 : 401;
        const body = JSON.stringify({
          status,
          title: 'refused',
          detail: `refused with ${status}`,
          code: status === 401 ? 'UNAUTHENTICATED' : 'NOT_FOUND',
        });
        socket.end(
          `HTTP/1.1 ${status} Refused\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
        );
        return;
      }
      this.wss.handleUpgrade(req, socket, head, (ws) => {
        this.sockets.push(ws);
        this.emit('connection', ws);
      });
    });
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/api`;
  }

  /** The next connection (or the current one if it is already open and unused). */
  async connection(n: number): Promise<WebSocket> {
    while (this.sockets.length < n) await once(this, 'connection');
    return this.sockets[n - 1]!;
  }

  async stop(): Promise<void> {
    for (const ws of this.wss.clients) ws.terminate();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A Sink that can be waited on: resolves once the text written so far matches. */
class WatchedSink extends Sink {
  readonly events = new EventEmitter();
  override write(chunk: string | Uint8Array): boolean {
    super.write(chunk);
    this.events.emit('write');
    return true;
  }
  async waitFor(pattern: RegExp, timeoutMs = 10000): Promise<string> {
    const deadline = setTimeout(() => this.events.emit('timeout'), timeoutMs);
    try {
      while (!pattern.test(this.text())) {
        const [which] = await Promise.race([
          once(this.events, 'write').then(() => ['write']),
          once(this.events, 'timeout').then(() => ['timeout']),
        ]);
        if (which === 'timeout') throw new Error(`timed out waiting for ${pattern}; got:\n${this.text()}`);
      }
      return this.text();
    } finally {
      clearTimeout(deadline);
    }
  }
}

/** Runs `hookctl tail` in-process; `interrupt()` plays the part of Ctrl-C. */
function startTail(args: string[], opts: { env: NodeJS.ProcessEnv; tty: boolean }) {
  const stdout = new WatchedSink(opts.tty);
  const stderr = new WatchedSink(opts.tty);
  let handler: ((s: NodeJS.Signals) => void) | undefined;
  const deps: CliDeps = {
    io: { stdin: fakeStdin({ tty: false, input: '' }), stdout, stderr },
    env: opts.env,
    onSignal: (h) => {
      handler = h;
      return () => {
        handler = undefined;
      };
    },
  };
  const done = runCli(['tail', ...args], deps);
  return { stdout, stderr, done, interrupt: () => handler?.('SIGINT') };
}

const attempt = (over: Record<string, unknown>) => ({
  kind: 'attempt',
  Time: '2026-11-22T12:00:01.000Z',
  HookId: 'hk_a',
  DeliveryId: 'msg_1',
  Attempt: 1,
  Method: 'POST',
  Url: 'https://chat.example.com/hook',
  StatusCode: 200,
  LatencyMs: 2.14,
  Outcome: 'succeeded',
  Error: null,
  Trigger: { Method: 'GET', Path: '/repositories/r1/timeseries/ts1', StatusCode: 200 },
  ...over,
});

let fixture: TailFixture;
let env: NodeJS.ProcessEnv;

before(async () => {
  fixture = new TailFixture();
  await fixture.start();
  env = cleanEnv({ HOOKD_URL: fixture.url, HOOKD_TOKEN: TOKEN });
});

after(async () => {
  await fixture.stop();
});

describe('hookctl tail', () => {
  it('sends the token in the upgrade header and the filters in the query; -o json prints NDJSON; Ctrl-C exits 0', async () => {
    const before = fixture.sockets.length;
    const tail = startTail(['--hook', 'hk_a', '--hook', 'hk_b', '--status', 'failed', '-o', 'json'], {
      env,
      tty: false,
    });
    const ws = await fixture.connection(before + 1);
    await tail.stderr.waitFor(/^Ready! Streaming callbacks from .*\/api \(Ctrl-C to quit\)$/m);

    const req = fixture.upgrades.at(-1)!;
    const url = new URL(req.url!, 'http://x');
    assert.deepEqual(url.searchParams.getAll('hook'), ['hk_a', 'hk_b']);
    assert.equal(url.searchParams.get('status'), 'failed');
    assert.equal(url.searchParams.has('token'), false, 'never a token in the URL');
    assert.equal(req.headers.authorization, `Bearer ${TOKEN}`);

    const events = [
      {
        kind: 'fired',
        Time: '2026-11-22T12:00:00.000Z',
        HookId: 'hk_a',
        DeliveryId: 'msg_1',
        Trigger: { Method: 'GET', Path: '/x' },
      },
      attempt({}),
      { kind: 'dropped', Count: 3 },
    ];
    // Pretty-printed on purpose: the client must still write exactly one line per event.
    for (const e of events) ws.send(JSON.stringify(e, null, 2));
    await tail.stdout.waitFor(/"dropped"/);
    const lines = tail.stdout.text().trim().split('\n');
    assert.deepEqual(
      lines.map((l) => JSON.parse(l)),
      events,
    );

    tail.interrupt();
    assert.equal(await tail.done, 0);
  });

  it('table mode: one line per attempt, coloured by outcome on a terminal', async () => {
    const n = fixture.sockets.length;
    const tail = startTail([], { env, tty: true });
    const ws = await fixture.connection(n + 1);
    await tail.stderr.waitFor(/Ready!/);
    ws.send(JSON.stringify({ kind: 'fired', HookId: 'hk_a', Trigger: { Method: 'GET', Path: '/x' } }));
    ws.send(JSON.stringify(attempt({})));
    ws.send(JSON.stringify(attempt({ StatusCode: 503, Outcome: 'retrying', LatencyMs: 10 })));
    ws.send(
      JSON.stringify(
        attempt({ StatusCode: null, Error: 'connection refused', Outcome: 'failed', LatencyMs: null }),
      ),
    );
    ws.send(JSON.stringify({ kind: 'dropped', Count: 2 }));
    await tail.stderr.waitFor(/2 events were skipped/);
    const lines = tail.stdout.text().trim().split('\n');
    assert.equal(lines.length, 3, 'fired events are not lines of their own in table mode');
    const plain = lines.map((l) => l.replace(/\u001b\[[0-9;]*m/g, ''));
    assert.match(
      plain[0]!,
      /^\d\d:\d\d:\d\d {2}hk_a {2}GET \/repositories\/r1\/timeseries\/ts1 → 200 {2}2\.1ms$/,
    );
    assert.match(plain[1]!, /→ 503 \(retrying\) {2}10ms$/);
    assert.match(plain[2]!, /→ connection refused \(failed\)$/);
    assert.ok(lines[0]!.startsWith('\u001b[32m'), 'succeeded is green');
    assert.ok(lines[1]!.startsWith('\u001b[33m'), 'retrying is yellow');
    assert.ok(lines[2]!.startsWith('\u001b[31m'), 'failed is red');
    tail.interrupt();
    assert.equal(await tail.done, 0);
  });

  it('NO_COLOR: the same lines without colour', async () => {
    const n = fixture.sockets.length;
    const tail = startTail([], { env: { ...env, NO_COLOR: '1' }, tty: true });
    const ws = await fixture.connection(n + 1);
    await tail.stderr.waitFor(/Ready!/);
    ws.send(JSON.stringify(attempt({ Outcome: 'failed', StatusCode: 500 })));
    await tail.stdout.waitFor(/→ 500/);
    assert.doesNotMatch(tail.stdout.text(), /\u001b\[/);
    tail.interrupt();
    assert.equal(await tail.done, 0);
  });

  it('reconnects when the connection drops (hookd restarting) and keeps streaming', async () => {
    const n = fixture.sockets.length;
    const tail = startTail(['-o', 'json'], { env, tty: false });
    const first = await fixture.connection(n + 1);
    await tail.stderr.waitFor(/Ready!/);
    first.close(1001, 'hookd is shutting down');
    await tail.stderr.waitFor(/reconnecting…/);
    const second = await fixture.connection(n + 2);
    await tail.stderr.waitFor(/reconnected/);
    second.send(JSON.stringify(attempt({ DeliveryId: 'msg_after' })));
    await tail.stdout.waitFor(/msg_after/);
    tail.interrupt();
    assert.equal(await tail.done, 0);
  });

  it('exit 4 when the server refuses the token on the upgrade', async () => {
    const r = startTail([], { env: { ...env, HOOKD_TOKEN: 'wrong' }, tty: false });
    assert.equal(await r.done, 4);
    assert.match(r.stderr.text(), /refused with 401/);
  });

  it('exit 1 with the problem detail when the server has no tail endpoint', async () => {
    const r = startTail([], {
      env: { ...env, HOOKD_URL: fixture.url.replace(/\/api$/, '/other') },
      tty: false,
    });
    assert.equal(await r.done, 1);
    assert.match(r.stderr.text(), /^error: refused with 404/m);
  });

  it('exit 3 when hookd is not there at all', async () => {
    const port = await closedPort();
    const r = startTail([], { env: { ...env, HOOKD_URL: `http://127.0.0.1:${port}` }, tty: false });
    assert.equal(await r.done, 3);
    assert.match(r.stderr.text(), new RegExp(`cannot reach hookd at http://127\\.0\\.0\\.1:${port}`));
  });

  it('the real binary exits 0 on SIGINT', async () => {
    assertBuilt();
    const n = fixture.sockets.length;
    const child = spawn(process.execPath, [HOOKCTL_BIN, 'tail'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    await fixture.connection(n + 1);
    while (!stderr.includes('Ready!')) await once(child.stderr, 'data');
    child.kill('SIGINT');
    const [code, signal] = await exited;
    assert.equal(signal, null, stderr);
    assert.equal(code, 0, stderr);
  });
});

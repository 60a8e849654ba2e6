import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { api, type HookdProcess, spawnHookd, startHookd, type TestDaemon } from '../helpers/hookd.js';
import { addUser, createHook, type Receiver, sleep, startReceiver } from '../helpers/servers.js';
import { counterSum, until } from '../helpers/until.js';
import { assertBuilt, cleanEnv, closedPort, HOOKCTL_BIN, hookctl } from '../hookctl/helpers.js';

// The live tail (docs/API.md "Live tail") through a real hookd: the real hookctl binary and raw
// WebSocket clients against the daemon's /tail.

interface TailEvent {
  kind: 'fired' | 'attempt' | 'dropped';
  HookId?: string;
  DeliveryId?: string;
  Outcome?: string;
  StatusCode?: number | null;
  Count?: number;
  Trigger?: { Method: string; Path: string; StatusCode: number | null; User?: string | null };
}

/** `hookctl tail` as a child process, its stdout read line by line as it comes. */
class TailProcess {
  readonly child: ChildProcess;
  readonly lines: { text: string; at: number }[] = [];
  stderr = '';
  private readonly exited: Promise<number | null>;

  constructor(args: string[], env: NodeJS.ProcessEnv) {
    this.child = spawn(process.execPath, [HOOKCTL_BIN, 'tail', ...args], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
    createInterface({ input: this.child.stdout! }).on('line', (text) =>
      this.lines.push({ text, at: performance.now() }),
    );
    this.child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      this.stderr += d;
    });
  }

  events(): TailEvent[] {
    return this.lines.map((l) => JSON.parse(l.text) as TailEvent);
  }

  async waitErr(pattern: RegExp, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pattern.test(this.stderr)) {
      if (Date.now() > deadline) throw new Error(`no ${pattern} on hookctl's stderr:\n${this.stderr}`);
      await sleep(20);
    }
  }

  /** The first line (as parsed JSON, with its arrival time) that satisfies `pred`. */
  async waitEvent(
    pred: (e: TailEvent) => boolean,
    timeoutMs = 5000,
  ): Promise<{ event: TailEvent; at: number }> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      for (const l of this.lines) {
        const event = JSON.parse(l.text) as TailEvent;
        if (pred(event)) return { event, at: l.at };
      }
      if (Date.now() > deadline)
        throw new Error(
          `no such tail line within ${timeoutMs} ms; got:\n${this.lines.map((l) => l.text).join('\n')}\n${this.stderr}`,
        );
      await sleep(10);
    }
  }

  /** Ctrl-C; resolves to the exit code. */
  async stop(): Promise<number | null> {
    this.child.kill('SIGINT');
    return this.exited;
  }

  done(): Promise<number | null> {
    return this.exited;
  }
}

/** A raw WebSocket to /tail; resolves once open, or rejects with the refusal's status and body. */
function rawTail(
  base: string,
  query: string,
  headers: Record<string, string>,
): Promise<{ ws: WebSocket; messages: TailEvent[] }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/_hookd/tail${query}`, { headers });
    const messages: TailEvent[] = [];
    ws.on('message', (data) => messages.push(JSON.parse(data.toString()) as TailEvent));
    ws.on('open', () => resolve({ ws, messages }));
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () =>
        reject(Object.assign(new Error(`${res.statusCode} ${body}`), { status: res.statusCode, body })),
      );
    });
    ws.on('error', reject);
  });
}

let d: TestDaemon;
let rcv: Receiver;
let env: NodeJS.ProcessEnv;

before(async () => {
  assertBuilt();
  rcv = await startReceiver();
  d = await startHookd();
  env = cleanEnv({ HOOKD_URL: d.url, HOOKD_TOKEN: d.token });
});

after(async () => {
  await d?.close();
  await rcv?.close();
});

const fire = (path: string, token = d.token, base = d.url) =>
  api(base, token, 'POST', '/_hookd/report', { Method: 'GET', Path: path, StatusCode: 200, Phase: 'after' });

describe('hookctl tail (the real binary)', () => {
  it('says Ready on stderr, then prints a fired callback and its attempt as NDJSON within a second of the trigger', async () => {
    const hook = await createHook(d, { PathPattern: '/live', Methods: ['GET'], Callback: `${rcv.url}/live` });
    const tail = new TailProcess(['-o', 'json'], env);
    try {
      await tail.waitErr(/^Ready! Streaming callbacks from /m);
      const t0 = performance.now();
      assert.equal((await fire('/live/1')).status, 202);
      const fired = await tail.waitEvent((e) => e.kind === 'fired' && e.HookId === hook.Id);
      assert.ok(
        fired.at - t0 < 1000,
        `the fired line came ${Math.round(fired.at - t0)} ms after the trigger`,
      );
      assert.deepEqual(fired.event.Trigger, {
        Kind: 'request',
        Method: 'GET',
        Path: '/live/1',
        StatusCode: 200,
        User: null,
      });
      const attempt = await tail.waitEvent((e) => e.kind === 'attempt' && e.HookId === hook.Id);
      assert.equal(attempt.event.DeliveryId, fired.event.DeliveryId);
      assert.equal(attempt.event.Outcome, 'succeeded');
      assert.equal(attempt.event.StatusCode, 200);
      for (const l of tail.lines) JSON.parse(l.text);
      assert.equal(await tail.stop(), 0, tail.stderr);
    } finally {
      tail.child.kill('SIGKILL');
    }
  });

  it("streams only the caller's own callbacks: another user's hook firing is not seen", async () => {
    const bob = await addUser(d, `bob${Date.now()}`);
    const bobsHook = await createHook(
      d,
      { PathPattern: '/shared', Methods: ['GET'], Callback: `${rcv.url}/bob` },
      { token: bob },
    );
    const mine = await createHook(d, {
      PathPattern: '/shared',
      Methods: ['GET'],
      Callback: `${rcv.url}/admin`,
    });
    const tail = new TailProcess(['-o', 'json'], env);
    const bobs = await rawTail(d.url, '', { authorization: `Bearer ${bob}` });
    try {
      await tail.waitErr(/Ready!/);
      rcv.reset();
      // One trigger fires both users' hooks (report fires every user's hooks, as the proxy does).
      await fire('/shared/1');
      await rcv.waitFor(2);
      await tail.waitEvent((e) => e.kind === 'attempt' && e.HookId === mine.Id);
      // Bob's own tail does see his, so his events did go out on the bus.
      await until(
        'an attempt on bob’s tail',
        () => bobs.messages.some((m) => m.kind === 'attempt'),
        5000,
      ).catch(() => undefined);
      assert.ok(bobs.messages.some((m) => m.kind === 'attempt' && m.HookId === bobsHook.Id));
      assert.ok(
        bobs.messages.every((m) => m.HookId === bobsHook.Id),
        JSON.stringify(bobs.messages),
      );
      // Bob's attempt event has gone out; a marker fired after it reaches this tail after anything
      // of bob's would.
      await fire('/shared/marker');
      await tail.waitEvent((e) => e.kind === 'fired' && e.Trigger?.Path === '/shared/marker');
      const seen = tail.events();
      assert.ok(
        seen.every((e) => e.HookId !== bobsHook.Id),
        `admin's tail showed bob's hook:\n${tail.lines.map((l) => l.text).join('\n')}`,
      );
      assert.ok(seen.some((e) => e.HookId === mine.Id));
    } finally {
      bobs.ws.terminate();
      await tail.stop();
    }
  });

  it('--hook ID streams that hook only', async () => {
    const a = await createHook(d, { PathPattern: '/only', Methods: ['GET'], Callback: `${rcv.url}/a` });
    const b = await createHook(d, { PathPattern: '/only', Methods: ['GET'], Callback: `${rcv.url}/b` });
    const tail = new TailProcess(['--hook', a.Id, '-o', 'json'], env);
    try {
      await tail.waitErr(/Ready!/);
      rcv.reset();
      await fire('/only/1');
      await rcv.waitFor(2);
      await tail.waitEvent((e) => e.kind === 'attempt' && e.HookId === a.Id);
      // b's attempt is in the delivery log, so its event has been emitted (with the outcome, before
      // the log is written); a marker fired after it reaches the tail after anything of b's would.
      await until(
        "b's attempt recorded",
        async () =>
          (await api<{ Attempts: number }[]>(d.url, d.token, 'GET', `/hooks/${b.Id}/deliveries`)).body,
        (v) => v.length === 1 && v[0]!.Attempts === 1,
      );
      await fire('/only/marker');
      await tail.waitEvent((e) => e.kind === 'fired' && e.Trigger?.Path === '/only/marker');
      assert.deepEqual(
        [...new Set(tail.events().map((e) => e.HookId))],
        [a.Id],
        `expected only ${a.Id}, not ${b.Id}`,
      );
    } finally {
      await tail.stop();
    }
  });

  it('no token anywhere: exit 4; a refused token: exit 4', async () => {
    const none = await hookctl(['tail'], { env: cleanEnv({ HOOKD_URL: d.url }) });
    assert.equal(none.code, 4, none.stderr);
    const wrong = await hookctl(['tail'], {
      env: cleanEnv({
        HOOKD_URL: d.url,
        HOOKD_TOKEN: 'hkd_000000000000_wrongwrongwrongwrongwrongwrongwrongwrong',
      }),
    });
    assert.equal(wrong.code, 4, wrong.stderr);
  });

  it('survives a daemon restart: SIGTERM, hookd starts again on the same port, and a new trigger is printed', async () => {
    const port = await closedPort();
    const listen = ['--listen', `127.0.0.1:${port}`];
    let daemon: HookdProcess = await spawnHookd(listen);
    const tail = new TailProcess(
      ['-o', 'json'],
      cleanEnv({ HOOKD_URL: daemon.url, HOOKD_TOKEN: daemon.token }),
    );
    try {
      const hook = await createHook(daemon, {
        PathPattern: '/restart',
        Methods: ['GET'],
        Callback: `${rcv.url}/restart`,
      });
      await tail.waitErr(/Ready!/);
      await fire('/restart/before', daemon.token, daemon.url);
      await tail.waitEvent((e) => e.kind === 'attempt' && e.Trigger?.Path === '/restart/before');

      assert.equal(await daemon.stop(), 0);
      await tail.waitErr(/reconnecting…/);
      daemon = await spawnHookd(listen, { dataDir: daemon.dataDir });
      assert.equal(daemon.url, `http://127.0.0.1:${port}`);
      await tail.waitErr(/reconnected/, 15_000);
      await fire('/restart/after', daemon.token, daemon.url);
      const { event } = await tail.waitEvent(
        (e) => e.kind === 'attempt' && e.Trigger?.Path === '/restart/after',
      );
      assert.equal(event.HookId, hook.Id);
      assert.equal(event.Outcome, 'succeeded');
      assert.equal(await tail.stop(), 0, tail.stderr);
    } finally {
      tail.child.kill('SIGKILL');
      await daemon.stop();
      rmSync(daemon.dataDir, { recursive: true, force: true });
    }
  });
});

describe('GET /tail', () => {
  it('refuses a token in the URL (400), even beside a good Authorization header', async () => {
    for (const [query, headers] of [
      [`?token=${d.token}`, {}],
      [`?access_token=${d.token}`, {}],
      [`?token=${d.token}`, { authorization: `Bearer ${d.token}` }],
    ] as const) {
      await assert.rejects(rawTail(d.url, query, headers), (err: { status?: number; body?: string }) => {
        assert.equal(err.status, 400, `${query}: ${err.body}`);
        assert.match(err.body ?? '', /token in the URL/);
        assert.ok(!(err.body ?? '').includes(d.token), 'the refusal echoes the token');
        return true;
      });
    }
    const ok = await rawTail(d.url, '', { authorization: `Bearer ${d.token}` });
    ok.ws.terminate();
  });

  it('refuses an upgrade without a token (401) and a bad status filter (400)', async () => {
    await assert.rejects(rawTail(d.url, '', {}), (err: { status?: number }) => err.status === 401);
    await assert.rejects(
      rawTail(d.url, '?status=7xx', { authorization: `Bearer ${d.token}` }),
      (err: { status?: number }) => err.status === 400,
    );
  });

  it('a plain GET (no upgrade) is 426 Upgrade Required', async () => {
    const r = await api(d.url, d.token, 'GET', '/_hookd/tail');
    assert.equal(r.status, 426, r.text);
    assert.equal(r.headers.get('upgrade'), 'websocket');
    assert.match(r.headers.get('content-type') ?? '', /^application\/problem\+json/);
  });

  /**
   * A raw tail client (on a hook of its own) that stops reading, then `n` callbacks fired at it.
   * Long trigger paths make each tail message ~7 KiB, so that its socket buffers and hookd's
   * 1 MiB allowance overflow.
   */
  async function stalledFlood(n: number) {
    const batch = 120;
    const long = 'x'.repeat(7000);
    const hook = await createHook(d, {
      PathPattern: '/flood',
      Methods: ['GET'],
      Callback: `${rcv.url}/flood`,
      CallbackContent: '{"n":1}',
    });
    const slow = await rawTail(d.url, `?hook=${hook.Id}`, { authorization: `Bearer ${d.token}` });
    slow.ws.pause();
    rcv.reset();
    const attemptsBefore = await counterSum(d.opsUrl, 'hookd_delivery_attempts_total');
    for (let b = 0; b < n / batch; b++) {
      const items = Array.from({ length: batch }, (_, i) => ({
        Method: 'GET',
        Path: `/flood/${long}/${b * batch + i}`,
        StatusCode: 200,
        Phase: 'after',
      }));
      const r = await api(d.url, d.token, 'POST', '/_hookd/report', items);
      assert.equal(r.status, 202, r.text);
    }
    // Delivered while the client reads nothing: a tail that held deliveries up would stall here.
    await rcv.waitFor(n, 120_000);
    // Every attempt is published before the client reads again: the attempts metric counts the
    // same event the tail is sent.
    await until(
      'every attempt published',
      () => counterSum(d.opsUrl, 'hookd_delivery_attempts_total'),
      (total) => total - attemptsBefore >= n,
    );
    return {
      slow,
      async cleanup() {
        slow.ws.terminate();
        await api(d.url, d.token, 'DELETE', `/hooks/${hook.Id}`);
      },
    };
  }

  /** Resolves once every one of `total` events has arrived or been counted in a `dropped` notice. */
  async function accountedFor(messages: TailEvent[], total: number): Promise<void> {
    await until('every event received or counted as dropped', () => {
      const { events, dropped } = count(messages);
      return events + dropped >= total;
    });
  }

  const count = (messages: TailEvent[]) => ({
    events: messages.filter((m) => m.kind !== 'dropped').length,
    dropped: messages.filter((m) => m.kind === 'dropped').reduce((n, m) => n + (m.Count ?? 0), 0),
  });

  it('a tail client that never reads does not hold up deliveries; it is dropped from and told so, or simply behind', async () => {
    const N = 600;
    const flood = await stalledFlood(N);
    try {
      const { messages } = flood.slow;
      flood.slow.ws.resume();
      await accountedFor(messages, 2 * N);
      // The next event carries the `dropped` notice, if anything was skipped.
      await fire('/flood/last');
      const deadline = Date.now() + 5000;
      const isLast = (m: TailEvent) => m.kind === 'attempt' && m.Trigger?.Path === '/flood/last';
      while (!messages.some(isLast)) {
        if (Date.now() > deadline) throw new Error(`the slow client got ${messages.length} messages`);
        await sleep(20);
      }
      const { events, dropped } = count(messages);
      // Every event is accounted for: received, or counted in a `dropped` notice.
      assert.equal(events + dropped, 2 * (N + 1), `received ${events}, dropped ${dropped}`);
      if (dropped > 0) assert.ok(messages.findIndex((m) => m.kind === 'dropped') > 0);
    } finally {
      await flood.cleanup();
    }
  });

  it('a client that fell behind is told what it missed once it catches up, without waiting for another event', {
    timeout: 240_000,
  }, async () => {
    // How much the kernel buffers besides hookd's 1 MiB allowance varies: the flood doubles
    // until some events had to be skipped (a hookd that never skips fails at the largest).
    for (const N of [600, 1200, 2400]) {
      const flood = await stalledFlood(N);
      try {
        const { messages } = flood.slow;
        flood.slow.ws.resume();
        await accountedFor(messages, 2 * N);
        const { events, dropped } = count(messages);
        if (events === 2 * N && N < 2400) continue;
        assert.ok(events < 2 * N, `nothing was skipped of ${2 * N} events to a client that never read`);
        assert.equal(
          dropped,
          2 * N - events,
          `received ${events} of ${2 * N} events; notices for ${dropped}`,
        );
        return;
      } finally {
        await flood.cleanup();
      }
    }
  });

  it('hookd shutting down closes tail clients with 1001', async () => {
    const own = await startHookd();
    const { ws } = await rawTail(own.url, '', { authorization: `Bearer ${own.token}` });
    const closed = new Promise<[number, string]>((resolve) =>
      ws.once('close', (code, reason) => resolve([code, reason.toString()])),
    );
    await own.close();
    const [code, reason] = await closed;
    assert.equal(code, 1001);
    assert.match(reason, /shutting down/);
  });
});

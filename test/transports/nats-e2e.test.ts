import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { type JetStreamManager, jetstreamManager, type StoredMsg } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Webhook } from 'standardwebhooks';
import {
  api,
  type HookdProcess,
  spawnHookd,
  startHookd,
  type TestDaemon,
  tempDir,
} from '../helpers/hookd.js';
import { createHook, startUpstream, type Upstream } from '../helpers/servers.js';
import { startTcpRelay } from '../helpers/tcp-relay.js';
import { brokerMissing, burst, uniqueName } from '../helpers/transport-kit.js';
import { until } from '../helpers/until.js';

// hookd in front of an upstream; a proxied request fires a hook whose Callback is a NATS subject
// with the request's capture in it, stored by a JetStream stream each test makes (and deletes).
// The server is made unreachable with a TCP relay, never by stopping it.
const skip = await brokerMissing('NATS', 4222);

// Fast retries: a test waits seconds, not the Standard Webhooks schedule's hours, and outlasts
// a breaker's first cool-down (30 s), whose skipped attempts use steps of the schedule.
const FAST = [0, 0.2, 0.5, 1, 1, 2, 2, 3, 3, 5, 5, 5, 5, 5, 10, 10, 10, 10, 10, 10];

interface Delivery {
  Id: string;
  Status: string;
  Attempts: number;
  LastStatusCode: number | null;
  LastError: string | null;
}

describe('NATS JetStream callbacks through hookd', { skip }, () => {
  let upstream: Upstream;
  let d: TestDaemon;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  const streams: string[] = [];

  before(async () => {
    upstream = await startUpstream();
    d = await startHookd({ upstream: upstream.url });
    nc = await connect({ servers: '127.0.0.1:4222' });
    jsm = await jetstreamManager(nc);
  });
  after(async () => {
    for (const s of streams) await jsm.streams.delete(s).catch(() => false);
    await nc?.close();
    await d?.close();
    await upstream?.close();
  });

  async function stream(): Promise<{ name: string; base: string }> {
    const name = uniqueName('HOOKD_E2E');
    const base = uniqueName('e2e').toLowerCase();
    await jsm.streams.add({ name, subjects: [`${base}.>`] });
    streams.push(name);
    return { name, base };
  }

  /** Every message of a stream, in sequence order. */
  async function messages(name: string): Promise<StoredMsg[]> {
    const n = (await jsm.streams.info(name)).state.last_seq;
    const out: StoredMsg[] = [];
    for (let seq = 1; seq <= n; seq++) {
      const m = await jsm.streams.getMessage(name, { seq }).catch(() => null);
      if (m) out.push(m);
    }
    return out;
  }

  it('stores the templated payload under the templated subject, signed so that standardwebhooks verifies it', async () => {
    const { name, base } = await stream();
    const hook = await createHook(d, {
      PathPattern: '/repositories/*/timeseries/(*)',
      Methods: ['GET'],
      Callback: `nats://127.0.0.1:4222/${base}.$1.read`,
      CallbackContent: '{"path": "$REQUEST_PATH", "series": "$1"}',
      Headers: { 'X-Source': 'hookd-e2e' },
    });
    const secret = (await api<{ Secret: string }>(d.url, d.token, 'GET', `/hooks/${hook.Id}/secret`)).body
      .Secret;
    const res = await fetch(`${d.url}/repositories/r1/timeseries/ts.1`);
    assert.equal(res.status, 200);
    await res.arrayBuffer();
    await until('the stored message', async () => (await jsm.streams.info(name)).state.messages === 1);
    const [m] = await messages(name);
    // The capture is one subject token, its `.` escaped.
    assert.equal(m!.subject, `${base}.ts%2E1.read`);
    assert.deepEqual(m!.json(), { path: '/repositories/r1/timeseries/ts.1', series: 'ts.1' });
    assert.equal(m!.header.get('X-Source'), 'hookd-e2e');
    const headers = {
      'webhook-id': m!.header.get('webhook-id'),
      'webhook-timestamp': m!.header.get('webhook-timestamp'),
      'webhook-signature': m!.header.get('webhook-signature'),
    };
    assert.equal(m!.header.get('Nats-Msg-Id'), headers['webhook-id']);
    assert.ok(new Webhook(secret).verify(m!.string(), headers));
    const [delivery] = await until(
      'the delivery succeeded',
      async () => (await api<Delivery[]>(d.url, d.token, 'GET', `/hooks/${hook.Id}/deliveries`)).body,
      (ds) => ds[0]?.Status === 'succeeded',
    );
    assert.equal(delivery!.LastStatusCode, null);
  });

  it('refuses a wildcard written into the subject with 400 naming Callback and the rule', async () => {
    for (const [callback, rule] of [
      ['nats://127.0.0.1:4222/ts.*.read', /the subject must not contain the wildcard "\*"/],
      ['nats://127.0.0.1:4222/ts.>', /the subject must not contain the wildcard ">"/],
    ] as const) {
      const r = await api<{ errors?: { field: string; message: string }[] }>(
        d.url,
        d.token,
        'POST',
        '/hooks',
        {
          PathPattern: '/wild/(*)',
          Methods: ['GET'],
          Callback: callback,
        },
      );
      assert.equal(r.status, 400, r.text);
      const e = r.body.errors?.find((x) => x.field === 'Callback');
      assert.match(e?.message ?? r.text, rule);
    }
  });

  it('keeps the order of each key', async () => {
    const { name, base } = await stream();
    await createHook(d, {
      PathPattern: '/ordered/(*)/(*)',
      Methods: ['GET'],
      Callback: `nats://127.0.0.1:4222/${base}.$1`,
      CallbackContent: '$2',
      CallbackContentMediaType: 'text/plain',
      Ordering: { Key: '$1' },
    });
    const N = 30;
    await burst(d.url, N * 2, (n) => `/ordered/k${n % 2}/${Math.floor(n / 2)}`, undefined, 1);
    await until('every message', async () => (await jsm.streams.info(name)).state.messages >= N * 2);
    const all = await messages(name);
    for (const key of ['k0', 'k1']) {
      const seq = all.filter((m) => m.subject === `${base}.${key}`).map((m) => Number(m.string()));
      assert.deepEqual(
        seq,
        Array.from({ length: N }, (_, i) => i),
        key,
      );
    }
  });

  it('names a subject that no stream captures in the delivery log, with no status code', async () => {
    const subject = uniqueName('nostream').toLowerCase();
    const hook = await createHook(d, {
      PathPattern: '/nostream/(*)',
      Methods: ['GET'],
      Callback: `nats://127.0.0.1:4222/${subject}.$1`,
      CallbackContent: '$1',
      RetrySchedule: [0, 60],
    });
    await (await fetch(`${d.url}/nostream/x1`)).arrayBuffer();
    const [delivery] = await until(
      'the refusal in the delivery log',
      async () => (await api<Delivery[]>(d.url, d.token, 'GET', `/hooks/${hook.Id}/deliveries`)).body,
      (ds) => (ds[0]?.LastError ?? '').length > 0,
    );
    assert.equal(delivery!.LastStatusCode, null);
    assert.match(delivery!.LastError!, new RegExp(`no JetStream stream captures subject ${subject}\\.x1`));
  });

  it('retries while the server is cut off mid-burst, then stores every message once', async () => {
    const { name, base } = await stream();
    const relay = await startTcpRelay('127.0.0.1', 4222);
    try {
      const hook = await createHook(d, {
        PathPattern: '/cut/(*)',
        Methods: ['GET'],
        Callback: `nats://127.0.0.1:${relay.port}/${base}.$1`,
        CallbackContent: '$1',
        CallbackContentMediaType: 'text/plain',
        RetrySchedule: FAST,
      });
      const N = 200;
      let cut = false;
      let done = 0;
      await burst(
        d.url,
        N,
        (n) => `/cut/${n}`,
        () => {
          if (!cut && ++done >= 20) {
            cut = true;
            relay.cut();
          }
        },
      );
      if (!cut) relay.cut();
      await until(
        'a retried delivery',
        async () =>
          (await api<Delivery[]>(d.url, d.token, 'GET', `/hooks/${hook.Id}/deliveries?limit=1000`)).body,
        (ds) => ds.some((x) => x.Attempts > 1 && x.Status === 'pending'),
      );
      relay.restore();
      await until(
        'every message after the restore',
        async () => (await jsm.streams.info(name)).state.messages >= N,
        90_000,
      );
      const all = await messages(name);
      assert.equal(new Set(all.map((m) => m.string())).size, N);
      assert.equal(all.length, N, 'no message stored twice');
    } finally {
      await relay.close();
    }
  });
});

describe('NATS callbacks and kill -9 of hookd', { skip }, () => {
  it('loses no message of a burst of 1,000 when hookd is killed in the middle, and stores none twice', {
    timeout: 240_000,
  }, async () => {
    const nc = await connect({ servers: '127.0.0.1:4222' });
    const jsm = await jetstreamManager(nc);
    const name = uniqueName('HOOKD_KILL');
    const base = uniqueName('kill').toLowerCase();
    await jsm.streams.add({ name, subjects: [`${base}.>`] });
    const upstream = await startUpstream();
    const dataDir = tempDir('hookd-nats-kill-');
    let daemon: HookdProcess | undefined;
    try {
      daemon = await spawnHookd(['--upstream', upstream.url], { dataDir });
      await createHook(daemon, {
        PathPattern: '/kill/(*)',
        Methods: ['GET'],
        Callback: `nats://127.0.0.1:4222/${base}.$1`,
        CallbackContent: '$1',
        CallbackContentMediaType: 'text/plain',
        RetrySchedule: FAST,
      });
      const completed = new Set<number>();
      const victim = daemon;
      let killed: Promise<void> | undefined;
      await burst(
        daemon.url,
        1000,
        (n) => `/kill/${n}`,
        (n) => {
          completed.add(n);
          if (completed.size === 400) killed = victim.kill();
        },
      );
      await (killed ?? victim.kill());
      assert.ok(completed.size >= 400);
      daemon = await spawnHookd(['--upstream', upstream.url], { dataDir });
      const stored = async () => {
        const info = await jsm.streams.info(name, { subjects_filter: `${base}.>` });
        return info.state.subjects ?? {};
      };
      await until(
        'every completed request as a stored message',
        async () => {
          const s = await stored();
          return [...completed].every((n) => (s[`${base}.${n}`] ?? 0) > 0);
        },
        120_000,
      );
      // Nats-Msg-Id is the delivery's id: what was stored before the kill and sent again after
      // it is a duplicate the stream dropped, so every subject holds one message.
      const twice = Object.entries(await stored()).filter(([, count]) => count > 1);
      assert.deepEqual(twice, []);
    } finally {
      await daemon?.stop().catch(() => undefined);
      await upstream.close();
      await jsm.streams.delete(name).catch(() => false);
      await nc.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

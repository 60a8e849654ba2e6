import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import mqtt, { type MqttClient } from 'mqtt';
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

// hookd in front of an upstream; a proxied request fires a hook whose Callback is an MQTT topic
// with the request's capture in it, and an MQTT 5 subscriber on the shared Mosquitto checks what
// arrives. The broker is made unreachable with a TCP relay, never by stopping it.
const skip = await brokerMissing('Mosquitto', 1883);

interface Got {
  topic: string;
  payload: string;
  props: Record<string, string>;
}

async function subscriber(filter: string): Promise<{ got: Got[]; client: MqttClient }> {
  const client = await mqtt.connectAsync('mqtt://127.0.0.1:1883', { protocolVersion: 5, reconnectPeriod: 0 });
  const got: Got[] = [];
  client.on('message', (topic, payload, packet) => {
    const props: Record<string, string> = {};
    for (const [k, v] of Object.entries(packet.properties?.userProperties ?? {}))
      props[k] = Array.isArray(v) ? v[0]! : v;
    got.push({ topic, payload: payload.toString('utf8'), props });
  });
  await client.subscribeAsync(filter, { qos: 1 });
  return { got, client };
}

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

describe('MQTT callbacks through hookd', { skip }, () => {
  let upstream: Upstream;
  let d: TestDaemon;
  before(async () => {
    upstream = await startUpstream();
    d = await startHookd({ upstream: upstream.url });
  });
  after(async () => {
    await d?.close();
    await upstream?.close();
  });

  it('publishes the templated payload to the templated topic, signed so that standardwebhooks verifies it', async () => {
    const base = uniqueName('e2e');
    const sub = await subscriber(`${base}/+/read`);
    try {
      const hook = await createHook(d, {
        PathPattern: '/repositories/*/timeseries/(*)',
        Methods: ['GET'],
        Callback: `mqtt://127.0.0.1:1883/${base}/$1/read`,
        CallbackContent: '{"path": "$REQUEST_PATH", "series": "$1"}',
        Headers: { 'X-Source': 'hookd-e2e' },
      });
      const secret = (await api<{ Secret: string }>(d.url, d.token, 'GET', `/hooks/${hook.Id}/secret`)).body
        .Secret;
      const res = await fetch(`${d.url}/repositories/r1/timeseries/ts+1`);
      assert.equal(res.status, 200);
      await res.arrayBuffer();
      const [got] = await until('the message', () => (sub.got.length > 0 ? sub.got : undefined));
      // The capture is one topic level, its `+` escaped: a wildcard cannot come from a request.
      assert.equal(got!.topic, `${base}/ts%2B1/read`);
      assert.deepEqual(JSON.parse(got!.payload), {
        path: '/repositories/r1/timeseries/ts+1',
        series: 'ts+1',
      });
      assert.equal(got!.props['X-Source'], 'hookd-e2e');
      const headers = {
        'webhook-id': got!.props['webhook-id'] ?? '',
        'webhook-timestamp': got!.props['webhook-timestamp'] ?? '',
        'webhook-signature': got!.props['webhook-signature'] ?? '',
      };
      assert.ok(new Webhook(secret).verify(got!.payload, headers));
      const [delivery] = await until(
        'the delivery succeeded',
        async () => (await api<Delivery[]>(d.url, d.token, 'GET', `/hooks/${hook.Id}/deliveries`)).body,
        (ds) => ds[0]?.Status === 'succeeded',
      );
      assert.equal(delivery!.Id, headers['webhook-id']);
      assert.equal(delivery!.LastStatusCode, null);
    } finally {
      await sub.client.endAsync();
    }
  });

  it('refuses a wildcard written into the topic with 400 naming Callback and the rule', async () => {
    for (const [callback, rule] of [
      ['mqtt://127.0.0.1:1883/ts/+/read', /the topic must not contain the wildcard "\+"/],
      ['mqtt://127.0.0.1:1883/ts/#', /the topic must not contain the wildcard "#"/],
      ['mqtt://127.0.0.1:1883/ts/x?qos=5', /qos must be 0, 1 or 2 \(closest valid value: qos=2\)/],
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
    const base = uniqueName('order');
    const sub = await subscriber(`${base}/#`);
    try {
      await createHook(d, {
        PathPattern: '/ordered/(*)/(*)',
        Methods: ['GET'],
        Callback: `mqtt://127.0.0.1:1883/${base}/$1`,
        CallbackContent: '$2',
        CallbackContentMediaType: 'text/plain',
        Ordering: { Key: '$1' },
      });
      const N = 30;
      await burst(d.url, N * 2, (n) => `/ordered/k${n % 2}/${Math.floor(n / 2)}`, undefined, 1);
      await until('every message', () => sub.got.length >= N * 2);
      for (const key of ['k0', 'k1']) {
        const seq = sub.got.filter((g) => g.topic === `${base}/${key}`).map((g) => Number(g.payload));
        assert.deepEqual(
          seq,
          Array.from({ length: N }, (_, i) => i),
          key,
        );
      }
    } finally {
      await sub.client.endAsync();
    }
  });

  it('retries while the broker is cut off mid-burst, then delivers every message', async () => {
    const base = uniqueName('cut');
    const relay = await startTcpRelay('127.0.0.1', 1883);
    const sub = await subscriber(`${base}/#`);
    try {
      const hook = await createHook(d, {
        PathPattern: '/cut/(*)',
        Methods: ['GET'],
        Callback: `mqtt://127.0.0.1:${relay.port}/${base}/$1`,
        CallbackContent: '$1',
        CallbackContentMediaType: 'text/plain',
        RetrySchedule: FAST,
      });
      const N = 200;
      const ids = () => new Set(sub.got.map((g) => g.props['webhook-id']));
      let cut = false;
      await burst(
        d.url,
        N,
        (n) => `/cut/${n}`,
        () => {
          if (!cut && ids().size >= 20) {
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
      await until('every message after the restore', () => ids().size >= N, 90_000);
      const payloads = new Set(sub.got.map((g) => Number(g.payload)));
      assert.equal(payloads.size, N);
    } finally {
      await sub.client.endAsync();
      await relay.close();
    }
  });
});

describe('MQTT callbacks and kill -9 of hookd', { skip }, () => {
  it('loses no message of a burst of 1,000 when hookd is killed in the middle', {
    timeout: 240_000,
  }, async () => {
    const base = uniqueName('kill');
    const sub = await subscriber(`${base}/#`);
    const upstream = await startUpstream();
    const dataDir = tempDir('hookd-mqtt-kill-');
    let daemon: HookdProcess | undefined;
    try {
      daemon = await spawnHookd(['--upstream', upstream.url], { dataDir });
      await createHook(daemon, {
        PathPattern: '/kill/(*)',
        Methods: ['GET'],
        Callback: `mqtt://127.0.0.1:1883/${base}/$1`,
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
      const seen = () => new Set(sub.got.map((g) => Number(g.payload)));
      await until(
        'every completed request as a message',
        () => [...completed].every((n) => seen().has(n)),
        120_000,
      );
    } finally {
      await daemon?.stop().catch(() => undefined);
      await upstream.close();
      await sub.client.endAsync();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

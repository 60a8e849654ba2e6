/**
 * The end-to-end contract every broker transport passes, run by test/transports/*-e2e.test.ts
 * against a real hookd process and the real broker: a proxied request fires a hook whose Callback
 * is the broker URL with `$1` in its key; the consumer gets the templated payload with signatures
 * that verify, in order per key; a broker cut off mid-burst (a TCP relay) gets every message once
 * it is back; kill -9 of hookd mid-burst loses nothing.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { api, type HookdProcess, spawnHookd, tempDir } from './hookd.js';
import { createHook, startUpstream, type Upstream } from './servers.js';
import { startTcpRelay } from './tcp-relay.js';
import { burst } from './transport-kit.js';
import { until } from './until.js';

/** One message as the consumer got it: its key (routing key, stream key), payload and headers. */
export interface BrokerMessage {
  readonly key: string;
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
}

/** A place to publish to, made by the test, and its consumer. */
export interface Destination {
  /** The Callback URL for a broker at `hostPort`, with `$1` in the routing key or stream key. */
  callback(hostPort: string): string;
  /** The key a message for template value `v` lands under (the value escaped for its place). */
  keyFor(v: string): string;
  /** Every message received so far, for the template values the test used. */
  messages(values: readonly string[]): Promise<BrokerMessage[]>;
}

export interface BrokerUnderTest {
  readonly scheme: string;
  /** The real broker's port on 127.0.0.1, for the relay. */
  readonly port: number;
  /** What the delivery log shows for a delivered attempt: the broker's receipt in words. */
  readonly receipt: RegExp;
  destination(): Promise<Destination>;
}

export const PATTERN = '/repositories/*/timeseries/(*)/points/(*)';
export const CONTENT = '{"ts":"$1","seq":"$2"}';
// Short, so that a retry comes within the test's patience; long in total, so that no delivery
// runs out of attempts while the broker's circuit is open.
const RETRIES = ['--retry-schedule', '0,1s,1s,2s,2s,5s,5s,10s,10s,10s,10s,10s,10s,10s,10s,10s'];

export function hookdArgs(scheme: string, upstream: Upstream): string[] {
  return ['--upstream', upstream.url, '--callback-schemes', `http,https,${scheme}`, ...RETRIES];
}

const path = (ts: string, seq: number) =>
  `/repositories/r1/timeseries/${encodeURIComponent(ts)}/points/${seq}`;
const seqOf = (m: BrokerMessage) => Number((JSON.parse(m.body) as { seq: string }).seq);

export interface DeliveryView {
  Id: string;
  Status: string;
  Attempts: number;
  LastStatusCode: number | null;
  LastError: string | null;
}

interface AttemptView {
  StatusCode: number | null;
  Error: string | null;
  ResponseBody: string | null;
}

export function brokerContract(broker: BrokerUnderTest): void {
  describe(`${broker.scheme} callbacks through hookd (contract)`, () => {
    let upstream: Upstream;
    let daemon: HookdProcess | undefined;

    before(async () => {
      upstream = await startUpstream((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      });
    });

    after(async () => {
      await daemon?.stop();
      await upstream.close();
      if (daemon) rmSync(daemon.dataDir, { recursive: true, force: true });
    });

    async function hookd(): Promise<HookdProcess> {
      daemon ??= await spawnHookd(hookdArgs(broker.scheme, upstream));
      return daemon;
    }

    it('delivers the templated payload with signatures that verify, in order per key', async () => {
      const d = await hookd();
      const dest = await broker.destination();
      const hook = await createHook(d, {
        PathPattern: PATTERN,
        Methods: ['GET'],
        Callback: dest.callback('127.0.0.1:' + broker.port),
        CallbackContent: CONTENT,
        Ordering: { Key: '$1' },
      });
      const secret = (await api<{ Secret: string }>(d.url, d.token, 'GET', `/hooks/${hook.Id}/secret`)).body
        .Secret;
      const values = ['a.b:c', 'ts2'];
      // Triggers one after the other, interleaving the two keys: the trigger order is known.
      for (let seq = 0; seq < 25; seq++) {
        for (const v of values) await burst(d.url, 1, () => path(v, seq), undefined, 1);
      }
      const got = await until(
        'every message',
        () => dest.messages(values),
        (ms) => ms.length >= 50,
      );
      for (const v of values) {
        const mine = got.filter((m) => m.key === dest.keyFor(v));
        assert.deepEqual(
          mine.map(seqOf),
          Array.from({ length: 25 }, (_, i) => i),
          `order for ${v}`,
        );
        for (const m of mine) {
          assert.deepEqual(new Webhook(secret).verify(m.body, m.headers), { ts: v, seq: String(seqOf(m)) });
        }
      }
      const [one] = (await api<DeliveryView[]>(d.url, d.token, 'GET', `/hooks/${hook.Id}/deliveries?limit=1`))
        .body;
      // The broker's confirm reaches the delivery's record a moment after the consumer has the message.
      const detail = await until(
        'the newest delivery recorded',
        () =>
          api<DeliveryView & { AttemptLog: AttemptView[] }>(
            d.url,
            d.token,
            'GET',
            `/_hookd/deliveries/${one!.Id}`,
          ),
        (r) => r.body.Status !== 'pending',
      );
      assert.equal(detail.body.Status, 'succeeded');
      assert.equal(detail.body.LastStatusCode, null);
      const attempts = detail.body.AttemptLog;
      assert.equal(attempts.at(-1)!.StatusCode, null);
      assert.match(attempts.at(-1)!.ResponseBody ?? '', broker.receipt);
    });

    it('gives retries while the broker is cut off mid-burst, then delivers every message', {
      timeout: 90_000,
    }, async () => {
      const d = await hookd();
      const relay = await startTcpRelay('127.0.0.1', broker.port);
      try {
        const dest = await broker.destination();
        const hook = await createHook(d, {
          PathPattern: PATTERN,
          Methods: ['GET'],
          Callback: dest.callback(`127.0.0.1:${relay.port}`),
          CallbackContent: CONTENT,
        });
        const paths = Array.from({ length: 100 }, (_, i) => path('cut', i));
        let cut = false;
        await burst(
          d.url,
          paths.length,
          (i) => paths[i]!,
          (i) => {
            if (i >= 30 && !cut) {
              cut = true;
              relay.cut();
            }
          },
          8,
        );
        const failed = await until('a failed attempt in the delivery log', async () => {
          const r = await api<DeliveryView[]>(
            d.url,
            d.token,
            'GET',
            `/hooks/${hook.Id}/deliveries?limit=200`,
          );
          return r.body.find((x) => x.LastError !== null);
        });
        assert.equal(failed.LastStatusCode, null);
        relay.restore();
        const got = await until(
          'every message after the broker is back',
          () => dest.messages(['cut']),
          (ms) => new Set(ms.map(seqOf)).size === 100,
          60_000,
        );
        assert.equal(new Set(got.map(seqOf)).size, 100);
      } finally {
        await relay.close();
      }
    });

    it('loses nothing when hookd is killed (kill -9) mid-burst of 1,000', { timeout: 120_000 }, async () => {
      const dataDir = tempDir('hookd-broker-crash-');
      let victim: HookdProcess | undefined = await spawnHookd(hookdArgs(broker.scheme, upstream), {
        dataDir,
      });
      try {
        const dest = await broker.destination();
        await createHook(victim, {
          PathPattern: PATTERN,
          Methods: ['GET'],
          Callback: dest.callback(`127.0.0.1:${broker.port}`),
          CallbackContent: CONTENT,
        });
        const paths = Array.from({ length: 1000 }, (_, i) => path('crash', i));
        const completed = new Set<number>();
        let killed: Promise<void> | undefined;
        const v = victim;
        await burst(
          victim.url,
          paths.length,
          (i) => paths[i]!,
          (i) => {
            completed.add(i);
            if (completed.size === 500) killed = v.kill();
          },
          32,
        );
        await (killed ?? victim.kill());
        victim = await spawnHookd(hookdArgs(broker.scheme, upstream), { dataDir });
        const got = await until(
          'every completed trigger delivered after the restart',
          () => dest.messages(['crash']),
          (ms) => {
            const seen = new Set(ms.map(seqOf));
            return [...completed].every((n) => seen.has(n));
          },
          90_000,
        );
        assert.ok(completed.size >= 500);
        // A message sent before the kill and again after it carries the same webhook-id.
        const ids = new Map<number, Set<string>>();
        for (const m of got) {
          const s = ids.get(seqOf(m)) ?? new Set<string>();
          s.add(m.headers['webhook-id'] ?? '');
          ids.set(seqOf(m), s);
        }
        assert.ok([...ids.values()].every((s) => s.size === 1));
      } finally {
        await victim?.stop().catch(() => undefined);
        rmSync(dataDir, { recursive: true, force: true });
      }
    });
  });
}

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { createClient } from 'redis';
import { escapeRedisValue } from '../../src/transports/redis/index.js';
import { type BrokerMessage, brokerContract, type DeliveryView, hookdArgs } from '../helpers/broker-e2e.js';
import { api, type HookdProcess, spawnHookd } from '../helpers/hookd.js';
import { createHook, startUpstream, type Upstream } from '../helpers/servers.js';
import { brokerMissing, burst, uniqueName } from '../helpers/transport-kit.js';
import { until } from '../helpers/until.js';

const skip = await brokerMissing('Redis', 6379);

const admin = createClient({ socket: { host: '127.0.0.1', port: 6379 } });
const keys: string[] = [];

before(async () => {
  if (!skip) await admin.connect();
});

after(async () => {
  if (!admin.isOpen) return;
  if (keys.length) await admin.del(keys);
  admin.destroy();
});

const inKey = (v: string) => decodeURIComponent(escapeRedisValue(v));
type Entry = [id: string, fields: string[]];

describe('redis end to end', { skip }, () => {
  brokerContract({
    scheme: 'redis',
    receipt: /^added to stream hookd:e2e_\w+:(ts2|a\.b%3Ac) as \d+-\d+ on 127\.0\.0\.1:6379$/,
    port: 6379,
    async destination() {
      const prefix = uniqueName('hookd:e2e');
      return {
        callback: (hostPort) => `redis://${hostPort}/0?stream=${prefix}:$1`,
        keyFor: (v) => `${prefix}:${inKey(v)}`,
        async messages(values) {
          const out: BrokerMessage[] = [];
          for (const v of values) {
            const key = `${prefix}:${inKey(v)}`;
            if (!keys.includes(key)) keys.push(key);
            const entries = (await admin.sendCommand(['XRANGE', key, '-', '+'])) as Entry[];
            for (const [, f] of entries) {
              const fields: Record<string, string> = {};
              for (let i = 0; i < f.length; i += 2) fields[f[i]!] = f[i + 1]!;
              out.push({ key, body: fields.body ?? '', headers: fields });
            }
          }
          return out;
        },
      };
    },
  });

  describe('refusals in the delivery log', () => {
    let upstream: Upstream;
    let d: HookdProcess;

    before(async () => {
      upstream = await startUpstream((_req, res) => {
        res.writeHead(200).end('ok');
      });
      d = await spawnHookd(hookdArgs('redis', upstream));
    });

    after(async () => {
      await d.stop();
      await upstream.close();
      rmSync(d.dataDir, { recursive: true, force: true });
    });

    it('names a key of another type (WRONGTYPE), with no HTTP status and no password', async () => {
      const key = uniqueName('hookd:e2e:str');
      keys.push(key);
      await admin.set(key, 'a string');
      const hook = await createHook(d, {
        PathPattern: '/wrongtype/(*)',
        Methods: ['GET'],
        Callback: `redis://default:s3cr3t-pw@127.0.0.1:6379/0?stream=${key}`,
        CallbackContent: '{"ts":"$1"}',
      });
      await burst(d.url, 1, () => '/wrongtype/ts1', undefined, 1);
      const dl = await until('the refusal in the delivery log', async () => {
        const r = await api<DeliveryView[]>(d.url, d.token, 'GET', `/hooks/${hook.Id}/deliveries`);
        return r.body.find((x) => x.LastError !== null);
      });
      assert.equal(dl.LastStatusCode, null);
      assert.equal(dl.LastError, `WRONGTYPE at key ${key} (it holds a string, not a stream)`);
      const one = await api(d.url, d.token, 'GET', `/_hookd/deliveries/${dl.Id}`);
      assert.doesNotMatch(one.text, /s3cr3t/);
      assert.ok(
        d.lines.length > 0 && !d.lines.some((l) => l.includes('s3cr3t')),
        "no password in hookd's log",
      );
    });
  });
});

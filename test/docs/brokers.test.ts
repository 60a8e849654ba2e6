import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import amqp from 'amqplib';
import { REPO_ROOT, spawnHookd } from '../helpers/hookd.js';
import { requireOrSkip } from '../helpers/require.js';
import { startUpstream, type Upstream } from '../helpers/servers.js';
import { until } from '../helpers/until.js';
import { type Block, hookctlShim, page, readerEnv, runBlock, shellBlocks, startBlock } from './doc-steps.js';

// The broker steps of docs/guides/brokers.md, run as written from a directory outside the clone
// (a fresh HOME whose ~/hookd-brokers gets the snippets' libraries by the guide's own npm
// install), against the machine's real brokers and a spawned hookd. Only hookd's address is
// put in for 127.0.0.1:8470. A step that fails, or a consumer that never prints the callback,
// fails the test: the guide's steps are what a reader runs.

const GUIDE = 'docs/guides/brokers.md';
const CONSUMER = /consume\(|XREAD BLOCK|mosquitto_sub|consumers\.get/;
const FIRE = /^curl -s -o \/dev\/null http:\/\/127\.0\.0\.1:8470\//m;

const blocks = shellBlocks(page(REPO_ROOT, GUIDE));
const home = mkdtempSync(join(tmpdir(), 'hookd-reader-'));
const dir = join(home, 'hookd-brokers');
// The reader's npm cache, so that the guide's `npm install` does not fetch what this machine has.
const npmCache = join(homedir(), '.npm');

let upstream: Upstream;
before(async () => {
  upstream = await startUpstream();
});
after(async () => {
  await upstream?.close();
  rmSync(home, { recursive: true, force: true });
});

async function runSection(section: string): Promise<void> {
  const steps = blocks.filter((b) => b.section === section);
  assert.ok(steps.length >= 3, `${section}: ${steps.length} steps`);
  assert.ok(steps.some((b) => CONSUMER.test(b.code)) && steps.some((b) => FIRE.test(b.code)), section);
  const d = await spawnHookd(['--upstream', upstream.url]);
  const bin = hookctlShim(home);
  const env = readerEnv(home, bin, {
    HOOKD_URL: d.url,
    HOOKD_TOKEN: d.token,
    npm_config_cache: npmCache,
    npm_config_prefer_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
  });
  mkdirSync(dir, { recursive: true });
  const consumers: ReturnType<typeof startBlock>[] = [];
  let hookId: string | undefined;
  try {
    for (const step of steps as Block[]) {
      const code = step.code.replaceAll('http://127.0.0.1:8470', d.url);
      if (CONSUMER.test(code)) {
        consumers.push(startBlock(code, dir, env));
        continue;
      }
      if (!FIRE.test(code)) {
        const r = await runBlock(code, dir, env);
        assert.equal(r.code, 0, `${section}: the step failed:\n${code}\n${r.out}\n${r.err}`);
        hookId = /\bhk_[0-9a-z]+/.exec(r.out)?.[0] ?? hookId;
        continue;
      }
      assert.ok(hookId, `${section}: no step created a hook before the request`);
      const consumer = consumers.at(-1)!;
      // A subscriber that was not listening yet misses a message: fire again until it shows one
      // of this hook's deliveries (each request is a delivery of its own, with its webhook-id).
      const seen = await until(
        `${section}: the consumer prints a delivery of ${hookId}`,
        async () => {
          const r = await runBlock(code, dir, env);
          assert.equal(r.code, 0, r.err);
          const res = await fetch(`${d.url}/hooks/${hookId}/deliveries`, {
            headers: { authorization: `Bearer ${d.token}` },
          });
          const ids = ((await res.json()) as { Id: string }[]).map((x) => x.Id);
          return until('a delivery shows', () => ids.find((id) => consumer.output().includes(id)), {
            ms: 4000,
            every: 100,
          }).catch(() => undefined);
        },
        { ms: 30_000, every: 500 },
      );
      assert.match(consumer.output(), /\/repositories\/r1\/timeseries\/ts1/, consumer.output());
      assert.ok(seen.startsWith('msg_'), seen);
    }
  } finally {
    for (const c of consumers) await c.stop();
    await d.stop();
  }
}

describe('the broker steps of docs/guides/brokers.md, from outside the clone', { timeout: 300_000 }, () => {
  it('RabbitMQ: on a plain broker, no management plugin', async (t) => {
    const probe = await amqp.connect('amqp://guest:guest@127.0.0.1:5672').catch(() => undefined);
    if (!probe) return requireOrSkip(t, 'RabbitMQ on 127.0.0.1:5672 (guest/guest) does not answer');
    // The guide declares ts.events and ts-reads; a queue left by an earlier run could hold old messages.
    const ch = await probe.createChannel();
    await ch.deleteQueue('ts-reads');
    try {
      await runSection('RabbitMQ (AMQP 0-9-1)');
    } finally {
      const clean = await probe.createChannel();
      await clean.deleteQueue('ts-reads');
      await clean.deleteExchange('ts.events');
      await probe.close();
    }
  });

  it('Redis Streams', async () => {
    await runSection('Redis Streams');
  });

  it('MQTT 5', async () => {
    await runSection('MQTT 5');
  });

  it('NATS JetStream', async () => {
    await runSection('NATS JetStream');
  });
});

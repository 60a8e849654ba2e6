import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DeliveryPipeline } from '../../src/delivery/pipeline.js';
import { AddressPolicy } from '../../src/policy/address-policy.js';
import { MemoryDeliveryStore } from '../../src/store/memory/memory-delivery-store.js';
import { SqliteDeliveryStore } from '../../src/store/sqlite/sqlite-delivery-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { startReceiver } from '../helpers/servers.js';
import { until } from '../helpers/until.js';

const COUNT = 20;

/** The fixture as this test runs: TypeScript through tsx, or the compiled file under dist/. */
function childCommand(args: string[]): string[] {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith('.ts')) {
    return ['--import', 'tsx', join(here, '..', 'fixtures', 'crash-child.ts'), ...args];
  }
  const compiled = join(here, '..', 'fixtures', 'crash-child.js');
  assert.ok(existsSync(compiled), `${compiled} is missing: compile with npx tsc -p tsconfig.json`);
  return [compiled, ...args];
}

describe('crash (kill -9) between attempts', () => {
  it('delivers after a restart whatever was recorded before the kill', { timeout: 60_000 }, async () => {
    let phase: 'before' | 'after' = 'before';
    const failing = await startReceiver({
      reply: () => (phase === 'after' ? { status: 200 } : { status: 500 }),
    });
    const hanging = await startReceiver({ reply: () => (phase === 'after' ? { status: 200 } : 'hang') });
    const dir = mkdtempSync(join(tmpdir(), 'hookd-crash-'));
    const file = join(dir, 'hookd.db');
    try {
      const child = spawn(process.execPath, childCommand([file, failing.url, hanging.url, String(COUNT)]), {
        stdio: ['ignore', 'pipe', 'pipe'],
        cwd: fileURLToPath(new URL('../../', import.meta.url)).replace(/dist\/$/, ''),
      });
      let stderr = '';
      child.stderr!.on('data', (d: Buffer) => {
        stderr += d.toString();
      });
      const exited = new Promise<NodeJS.Signals | null>((resolve) =>
        child.once('exit', (_code, sig) => resolve(sig)),
      );
      await new Promise<void>((resolve, reject) => {
        createInterface({ input: child.stdout! }).on('line', (line) => {
          if (line.includes('"ready"')) resolve();
        });
        child.once('exit', (code) =>
          reject(new Error(`the child exited (${code}) before it was ready: ${stderr}`)),
        );
      });
      child.kill('SIGKILL');
      assert.equal(await exited, 'SIGKILL');

      // What the killed process left behind: every delivery recorded, none finished.
      const store = new SqliteStore(file);
      const deliveries = new SqliteDeliveryStore(store.db);
      const left = await deliveries.listDeliveries('hk_crash');
      assert.equal(left.length, 2 * COUNT, 'every fired callback was recorded');
      assert.ok(left.every((d) => d.status === 'pending'));
      const failedOnce = left.filter((d) => d.request.url.includes('/fail/'));
      assert.ok(
        failedOnce.every((d) => d.attempts >= 1 && d.lastStatusCode === 500),
        'first attempts were logged',
      );
      const attempts = await deliveries.listAttempts(failedOnce[0]!.id);
      assert.equal(attempts[0]!.statusCode, 500);
      const inFlight = left.filter((d) => d.request.url.includes('/hang/'));
      assert.ok(hanging.calls.length > 0, 'some callbacks were in flight at the kill');
      assert.ok(
        inFlight.every((d) => d.attempts === 0),
        'attempts cut off by the kill left no record',
      );

      phase = 'after';
      const pipeline = new DeliveryPipeline({
        durable: deliveries,
        ephemeral: new MemoryDeliveryStore(),
        policy: new AddressPolicy(['127.0.0.0/8']),
        schedule: { delaysMs: [0, 50, 100], jitter: 0 },
        hookState: { isActive: () => true, disable: async () => undefined },
      });
      await pipeline.start();
      try {
        await until('the resumed deliveries to end', () => pipeline.stats().live === 0);
        await pipeline.flush();
        const after = await deliveries.listDeliveries('hk_crash');
        assert.ok(
          after.every((d) => d.status === 'succeeded'),
          'all delivered after the restart',
        );
        const answered = new Set(
          [...failing.calls, ...hanging.calls].filter((c) => c.answered).map((c) => c.headers['webhook-id']),
        );
        for (const d of left)
          assert.ok(answered.has(d.id), `${d.request.url} was delivered under its recorded id`);
      } finally {
        await pipeline.close(0);
        await store.close();
      }
    } finally {
      await failing.close();
      await hanging.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

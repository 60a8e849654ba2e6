import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type HookdProcess, spawnHookd, tempDir } from '../helpers/hookd.js';
import { createHook } from '../helpers/servers.js';
import { until } from '../helpers/until.js';

// What an empty configuration loads: a real hookd, with a preloaded module (`--import`) that
// records every module the process resolves and writes the list when sent SIGUSR2 (a signal
// hookd leaves alone). Module names, not timings: the check holds on any machine.

/** Packages and modules a daemon with no broker hook, no tracing and no Filter never needs. */
const NOT_AT_START = [
  '/node_modules/amqplib/',
  '/node_modules/mqtt/',
  '/node_modules/@nats-io/',
  '/node_modules/redis/',
  '/node_modules/@redis/',
  '/node_modules/@opentelemetry/sdk-trace',
  '/node_modules/@opentelemetry/exporter-trace-otlp-http/',
  '/node_modules/@opentelemetry/resources/',
  '/node_modules/@opentelemetry/core/',
  '/dist/src/tracing/otel-tracing.js',
  '/node_modules/@bufbuild/cel/',
];

const RECORDER = `
import { registerHooks } from 'node:module';
import { writeFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';
const seen = new Set();
registerHooks({
  resolve(specifier, context, next) {
    const r = next(specifier, context);
    seen.add(r.url);
    return r;
  },
});
if (isMainThread) process.on('SIGUSR2', () => writeFileSync(process.env.MODULE_LIST, [...seen].join('\\n')));
`;

const dir = tempDir('hookd-modules-');
const listFile = join(dir, 'modules.txt');
let hookd: HookdProcess;

/** The modules the daemon has resolved so far. */
async function loaded(): Promise<string[]> {
  rmSync(listFile, { force: true });
  hookd.proc.kill('SIGUSR2');
  await until(
    'the module list is written',
    () => existsSync(listFile),
    (ok) => ok,
  );
  return readFileSync(listFile, 'utf8').split('\n');
}

before(async () => {
  const recorder = join(dir, 'recorder.mjs');
  writeFileSync(recorder, RECORDER);
  hookd = await spawnHookd([], {
    env: {
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${recorder}`.trim(),
      MODULE_LIST: listFile,
      // No tracing whatever the environment of the test run says.
      OTEL_SDK_DISABLED: 'true',
    },
  });
});
after(async () => {
  await hookd.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('start-up of an empty configuration', () => {
  it('loads no broker client, no OpenTelemetry SDK and no CEL', async () => {
    const modules = await loaded();
    // The recorder sees the daemon's own modules: the list is real.
    assert.ok(
      modules.some((m) => m.endsWith('/dist/src/daemon/hookd.js')),
      'the daemon itself is in the list',
    );
    assert.ok(
      modules.some((m) => m.includes('/dist/src/transports/amqp/index.js')),
      'the AMQP registration is',
    );
    const found = modules.filter((m) => NOT_AT_START.some((p) => m.includes(p)));
    assert.deepEqual(found, []);
  });

  it('loads CEL once a hook with a Filter is made', async () => {
    await createHook(hookd, {
      PathPattern: '/filtered/(*)',
      Methods: ['POST'],
      Callback: 'http://127.0.0.1:9/never',
      Filter: 'request.method == "POST"',
    });
    const modules = await loaded();
    assert.ok(modules.some((m) => m.includes('/node_modules/@bufbuild/cel/')));
    // A hook with a Filter needs nothing else of that list.
    const others = modules.filter(
      (m) => !m.includes('/node_modules/@bufbuild/cel/') && NOT_AT_START.some((p) => m.includes(p)),
    );
    assert.deepEqual(others, []);
  });
});

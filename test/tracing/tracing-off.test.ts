/**
 * Tracing off (the default): nothing of the OpenTelemetry SDK is loaded into the daemon's
 * process, and callbacks carry no `traceparent` of hookd's (the proxied request's own goes to
 * the upstream untouched).
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';
import { startHookd, type TestDaemon } from '../helpers/hookd.js';
import {
  createHook,
  type Receiver,
  startReceiver,
  startUpstream,
  type Upstream,
} from '../helpers/servers.js';

const require = createRequire(import.meta.url);

describe('tracing off', () => {
  let upstream: Upstream;
  let receiver: Receiver;
  let d: TestDaemon;
  before(async () => {
    upstream = await startUpstream();
    receiver = await startReceiver();
    d = await startHookd({ upstream: upstream.url });
    await createHook(d, { PathPattern: '/orders/(*)', Methods: ['GET'], Callback: `${receiver.url}/cb` });
  });
  after(async () => {
    await d.close();
    await receiver.close();
    await upstream.close();
  });

  it('loads no OpenTelemetry module and sends no traceparent of its own', async () => {
    const incoming = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const res = await fetch(`${d.url}/orders/1`, { headers: { traceparent: incoming } });
    assert.equal(res.status, 200);
    await res.text();
    const [call] = await receiver.waitFor(1);
    assert.equal(call!.headers.traceparent, undefined);
    assert.equal(upstream.requests.at(-1)!.headers.traceparent, incoming, 'passed through unchanged');
    // The SDK (tracer provider, exporter, resources, core) stays unloaded. The small
    // @opentelemetry/api is there regardless: prom-client loads it for its exemplars.
    const loaded = Object.keys(require.cache).filter(
      (k) => k.includes('@opentelemetry') && !k.includes('@opentelemetry/api/'),
    );
    assert.deepEqual(loaded, []);
    assert.ok(
      Object.keys(require.cache).some((k) => k.includes('prom-client')),
      'the check sees CJS modules',
    );
  });
});

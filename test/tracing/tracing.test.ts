/**
 * OpenTelemetry end to end: a real hookd process with the standard OTEL_* variables, a real
 * upstream, a real receiver and a loopback OTLP/HTTP receiver written for the test. A proxied
 * request with a `traceparent` produces the proxy, fire and attempt spans in that one trace; the
 * callback's `traceparent` names the attempt span; a retry after a kill -9 and restart stays in
 * the trace (the fire span's context is stored with the delivery).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { tracingWanted } from '../../src/tracing/index.js';
import { assertBuilt } from '../cluster/cluster-helpers.js';
import { api, type HookdProcess, spawnHookd, tempDir } from '../helpers/hookd.js';
import { startUpstream, type Upstream } from '../helpers/servers.js';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from './otlp-receiver.js';

const SERVER = 2;
const CLIENT = 3;
const INTERNAL = 1;

interface Callback {
  url: string;
  headers: IncomingHttpHeaders;
}

/** A receiver answering from a script of statuses (then 200), recording each callback's headers. */
async function scriptedReceiver(script: number[]) {
  const calls: Callback[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      calls.push({ url: req.url ?? '', headers: req.headers });
      res.writeHead(script.shift() ?? 200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    script,
    async waitFor(n: number, ms = 15_000) {
      const deadline = Date.now() + ms;
      while (calls.length < n) {
        if (Date.now() > deadline) throw new Error(`${calls.length} of ${n} callbacks within ${ms} ms`);
        await new Promise((r) => setTimeout(r, 25));
      }
      return calls;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function parseTraceParent(v: unknown): { traceId: string; spanId: string; flags: string } {
  const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(String(v));
  assert.ok(m, `a W3C traceparent: ${String(v)}`);
  return { traceId: m[1]!, spanId: m[2]!, flags: m[3]! };
}

describe('tracing: off unless asked for', () => {
  it('follows OTEL_* and the config key', () => {
    assert.equal(tracingWanted({}, {}), false);
    assert.equal(tracingWanted({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }), true);
    assert.equal(tracingWanted({}, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' }), true);
    assert.equal(
      tracingWanted({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' }),
      false,
    );
    assert.equal(
      tracingWanted({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' }),
      false,
    );
    assert.equal(tracingWanted({ tracing: false }, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }), false);
    assert.equal(tracingWanted({ tracing: true }, {}), true);
    assert.equal(tracingWanted({ tracingEndpoint: 'http://c:4318/v1/traces' }, {}), true);
    assert.equal(tracingWanted({ tracing: true }, { OTEL_SDK_DISABLED: 'TRUE' }), false);
  });
});

describe('tracing: from the triggering request to the callback', { timeout: 90_000 }, () => {
  let otlp: OtlpReceiver;
  let upstream: Upstream;
  let receiver: Awaited<ReturnType<typeof scriptedReceiver>>;
  let hookd: HookdProcess;
  const dataDir = tempDir();
  const env = () => ({
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_SERVICE_NAME: 'hookd-under-test',
    OTEL_BSP_SCHEDULE_DELAY: '50',
  });

  before(async () => {
    assertBuilt();
    otlp = await startOtlpReceiver();
    upstream = await startUpstream();
    // First attempt of each delivery fails (500): the retry is the second attempt span.
    receiver = await scriptedReceiver([500]);
    hookd = await spawnHookd(['--upstream', upstream.url], { dataDir, env: env() });
  });
  after(async () => {
    await hookd?.kill();
    await receiver?.close();
    await upstream?.close();
    await otlp?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('proxy, fire and attempt spans share the incoming trace; the callback names the attempt span', async () => {
    const created = await api<{ Id: string }>(hookd.url, hookd.token, 'POST', '/hooks', {
      PathPattern: '/orders/(*)',
      Methods: ['GET'],
      Callback: `${receiver.url}/cb`,
      RetrySchedule: [0, 1],
    });
    assert.equal(created.status, 201, created.text);
    const traceId = randomBytes(16).toString('hex');
    const parentId = randomBytes(8).toString('hex');
    const res = await fetch(`${hookd.url}/orders/42`, {
      headers: { traceparent: `00-${traceId}-${parentId}-01` },
    });
    assert.equal(res.status, 200);
    await res.text();

    const calls = await receiver.waitFor(2);
    const first = parseTraceParent(calls[0]!.headers.traceparent);
    const second = parseTraceParent(calls[1]!.headers.traceparent);
    assert.equal(first.traceId, traceId, 'the callback continues the triggering trace');
    assert.equal(second.traceId, traceId);
    assert.notEqual(first.spanId, second.spanId, 'each attempt is its own span');
    assert.equal(first.flags, '01');

    const spans = await otlp.waitFor((s) => s.filter((x) => x.traceId === traceId).length >= 4);
    const inTrace = spans.filter((s) => s.traceId === traceId);
    const proxy = inTrace.find((s) => s.kind === SERVER);
    const fire = inTrace.find((s) => s.name === 'hookd.fire');
    const attempts = inTrace
      .filter((s) => s.kind === CLIENT)
      .sort((a, b) => Number(a.attributes['hookd.attempt']) - Number(b.attributes['hookd.attempt']));
    assert.ok(proxy, 'a proxy span');
    assert.ok(fire, 'a fire span');
    assert.equal(attempts.length, 2, 'an attempt span per attempt');
    assert.equal(proxy.parentSpanId, parentId, 'the proxy span continues the incoming traceparent');
    assert.equal(proxy.attributes['http.request.method'], 'GET');
    assert.equal(proxy.attributes['url.path'], '/orders/42');
    assert.equal(proxy.attributes['http.response.status_code'], 200);
    assert.equal(proxy.service, 'hookd-under-test');
    assert.equal(fire.kind, INTERNAL);
    assert.equal(fire.parentSpanId, proxy.spanId, 'the fire span is a child of the proxy span');
    assert.equal(fire.attributes['hookd.hook.id'], created.body.Id);
    const [a1, a2] = attempts as [ReceivedSpan, ReceivedSpan];
    assert.equal(a1.parentSpanId, fire.spanId);
    assert.equal(a2.parentSpanId, fire.spanId);
    assert.equal(a1.spanId, first.spanId, "the callback's traceparent names the attempt span");
    assert.equal(a2.spanId, second.spanId);
    assert.equal(a1.attributes['http.request.method'], 'POST');
    assert.equal(a1.attributes['server.address'], '127.0.0.1');
    assert.equal(a1.attributes['http.response.status_code'], 500);
    assert.equal(a1.status.code, 2, 'a failed attempt is an error span');
    assert.equal(a1.attributes['http.request.resend_count'], undefined);
    assert.equal(a2.attributes['http.response.status_code'], 200);
    assert.equal(a2.attributes['http.request.resend_count'], 1, 'the retry number');
    assert.ok(otlp.contentTypes.every((t) => t.startsWith('application/json')));
  });

  it('the upstream gets a traceparent naming the proxy span', async () => {
    const traceId = randomBytes(16).toString('hex');
    upstream.reset();
    const res = await fetch(`${hookd.url}/elsewhere`, {
      headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` },
    });
    await res.text();
    const seen = parseTraceParent(upstream.requests.at(-1)?.headers.traceparent);
    assert.equal(seen.traceId, traceId);
    const spans = await otlp.waitFor((s) => s.some((x) => x.traceId === traceId && x.kind === SERVER));
    assert.equal(spans.find((x) => x.traceId === traceId && x.kind === SERVER)!.spanId, seen.spanId);
  });

  it('a retry after kill -9 and restart stays in the trace of the triggering request', async () => {
    receiver.script.push(500);
    const created = await api<{ Id: string }>(hookd.url, hookd.token, 'POST', '/hooks', {
      PathPattern: '/restart/(*)',
      Methods: ['POST'],
      Callback: `${receiver.url}/restart`,
      RetrySchedule: [0, 3],
    });
    assert.equal(created.status, 201, created.text);
    const traceId = randomBytes(16).toString('hex');
    const r = await api(
      hookd.url,
      hookd.token,
      'POST',
      '/_hookd/report',
      { Method: 'POST', Path: '/restart/1', StatusCode: 201 },
      {
        traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
      },
    );
    assert.equal(r.status, 202, r.text);
    // The first attempt fails (500); its span and the fire span are exported, its outcome is
    // recorded (else the restarted hookd would make attempt 1 again); then hookd dies.
    await otlp.waitFor((s) => s.some((x) => x.traceId === traceId && x.kind === CLIENT));
    const fire = otlp.spans.find((x) => x.traceId === traceId && x.name === 'hookd.fire')!;
    assert.ok(fire, 'the fire span of the report');
    const firstSpan = otlp.spans.find((x) => x.traceId === traceId && x.kind === CLIENT)!;
    assert.equal(firstSpan.attributes['hookd.attempt'], 1);
    for (const deadline = Date.now() + 10_000; ; ) {
      const list = await api<{ Attempts: number }[]>(
        hookd.url,
        hookd.token,
        'GET',
        `/hooks/${created.body.Id}/deliveries`,
      );
      if (list.body[0]?.Attempts === 1) break;
      assert.ok(Date.now() < deadline, `the first attempt is recorded: ${list.text}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await hookd.kill();
    hookd = await spawnHookd(['--upstream', upstream.url], { dataDir, env: env() });
    const spans = await otlp.waitFor(
      (s) => s.filter((x) => x.traceId === traceId && x.kind === CLIENT).length >= 2,
      20_000,
    );
    const retry = spans.find(
      (x) => x.traceId === traceId && x.kind === CLIENT && x.attributes['hookd.attempt'] === 2,
    )!;
    assert.ok(retry, 'the second attempt, made by the restarted hookd, is in the same trace');
    assert.equal(retry.parentSpanId, fire.spanId, 'its parent is the fire span stored with the delivery');
    assert.equal(retry.attributes['http.response.status_code'], 200);
    const call = receiver.calls.filter((c) => c.url === '/restart').at(-1)!;
    assert.equal(parseTraceParent(call.headers.traceparent).spanId, retry.spanId);
  });
});

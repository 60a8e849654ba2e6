import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type Agent, request } from 'undici';
import { AddressPolicy } from '../../../src/policy/address-policy.js';
import {
  CallbackTargetDeniedError,
  createPinnedDispatcher,
} from '../../../src/transports/http/pinned-dispatcher.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

let server: Server;
let port: number;
let seen: Seen[] = [];
let connections = 0;

before(async () => {
  server = createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    req.resume();
    if (req.url === '/redirect') {
      res.writeHead(302, { location: '/elsewhere' }).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain' }).end('delivered');
  });
  server.on('connection', () => {
    connections++;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

after(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function reset(): void {
  seen = [];
  connections = 0;
}

/** A resolver that answers from a script, one entry per call, and counts its calls. */
function scriptedLookup(...answers: string[][]) {
  const calls: string[] = [];
  const lookup = async (hostname: string) => {
    calls.push(hostname);
    const answer = answers[Math.min(calls.length, answers.length) - 1];
    assert.ok(answer, 'scripted lookup has no answer');
    return answer;
  };
  return Object.assign(lookup, { calls });
}

async function withDispatcher<T>(dispatcher: Agent, fn: (d: Agent) => Promise<T>): Promise<T> {
  try {
    return await fn(dispatcher);
  } finally {
    await dispatcher.close();
  }
}

async function expectDenied(promise: Promise<unknown>, address: string): Promise<CallbackTargetDeniedError> {
  let caught: unknown;
  try {
    await promise;
  } catch (err) {
    caught = err;
  }
  const denied = caught instanceof CallbackTargetDeniedError ? caught : (caught as Error | undefined)?.cause;
  assert.ok(denied instanceof CallbackTargetDeniedError, `expected a denial, got ${String(caught)}`);
  assert.equal(denied.code, 'CALLBACK_TARGET_DENIED');
  assert.equal(denied.address, address);
  return denied;
}

describe('pinned dispatcher, IP literal hosts', () => {
  it('refuses loopback by default without connecting', async () => {
    reset();
    await withDispatcher(createPinnedDispatcher(new AddressPolicy()), async (dispatcher) => {
      const denied = await expectDenied(
        request(`http://127.0.0.1:${port}/hook`, { dispatcher }),
        '127.0.0.1',
      );
      assert.match(denied.message, /loopback \(127\.0\.0\.0\/8\).*--allow-callback-net 127\.0\.0\.0\/8/);
    });
    assert.equal(connections, 0);
    assert.equal(seen.length, 0);
  });

  it('delivers when the operator allows 127.0.0.0/8', async () => {
    reset();
    await withDispatcher(createPinnedDispatcher(new AddressPolicy(['127.0.0.0/8'])), async (dispatcher) => {
      const res = await request(`http://127.0.0.1:${port}/hook`, { dispatcher, method: 'POST', body: 'x' });
      assert.equal(res.statusCode, 200);
      assert.equal(await res.body.text(), 'delivered');
    });
    assert.equal(seen.length, 1);
    assert.equal(seen[0]?.url, '/hook');
    assert.equal(seen[0]?.method, 'POST');
  });

  it('does not follow a redirect', async () => {
    reset();
    await withDispatcher(createPinnedDispatcher(new AddressPolicy(['127.0.0.0/8'])), async (dispatcher) => {
      const res = await request(`http://127.0.0.1:${port}/redirect`, { dispatcher });
      await res.body.dump();
      assert.equal(res.statusCode, 302);
    });
    assert.deepEqual(
      seen.map((s) => s.url),
      ['/redirect'],
    );
  });
});

describe('pinned dispatcher, host names', () => {
  // `.test` names never resolve (RFC 6761), so a request that arrives proves the connection went
  // to the address the injected lookup returned and was checked, not to a second resolution.
  const host = 'hooks.example.test';

  it('refuses a name that resolves to loopback by default', async () => {
    reset();
    const lookup = scriptedLookup(['127.0.0.1']);
    await withDispatcher(createPinnedDispatcher(new AddressPolicy(), { lookup }), async (dispatcher) => {
      const denied = await expectDenied(request(`http://${host}:${port}/hook`, { dispatcher }), '127.0.0.1');
      assert.equal(denied.hostname, host);
      assert.match(
        denied.detail,
        new RegExp(`callback host ${host} resolves to 127\\.0\\.0\\.1, which is loopback`),
      );
      // The message reaches the hook's owner (the delivery log): the rule, not the address.
      assert.match(
        denied.message,
        new RegExp(`not sent: callback host ${host} resolves to an address the callback policy refuses`),
      );
      assert.doesNotMatch(denied.message, /127\.0\.0\.1/);
    });
    assert.equal(connections, 0);
  });

  it('connects to the checked address and keeps the Host header when allowed', async () => {
    reset();
    const lookup = scriptedLookup(['127.0.0.1']);
    const policy = new AddressPolicy(['127.0.0.0/8']);
    await withDispatcher(createPinnedDispatcher(policy, { lookup }), async (dispatcher) => {
      const res = await request(`http://${host}:${port}/hook?x=1`, { dispatcher });
      assert.equal(res.statusCode, 200);
      await res.body.dump();
    });
    assert.deepEqual(lookup.calls, [host]);
    assert.equal(seen.length, 1);
    assert.equal(seen[0]?.headers.host, `${host}:${port}`);
    assert.equal(seen[0]?.url, '/hook?x=1');
  });

  it('refuses a name when any resolved address is denied', async () => {
    reset();
    const lookup = scriptedLookup(['127.0.0.1', '10.0.0.1']);
    const policy = new AddressPolicy(['127.0.0.0/8']);
    await withDispatcher(createPinnedDispatcher(policy, { lookup }), async (dispatcher) => {
      await expectDenied(request(`http://${host}:${port}/hook`, { dispatcher }), '10.0.0.1');
    });
    assert.equal(connections, 0);
  });

  it('judges a mapped loopback answer as loopback', async () => {
    reset();
    const lookup = scriptedLookup(['::ffff:127.0.0.1']);
    await withDispatcher(createPinnedDispatcher(new AddressPolicy(), { lookup }), async (dispatcher) => {
      await expectDenied(request(`http://${host}:${port}/hook`, { dispatcher }), '::ffff:127.0.0.1');
    });
    assert.equal(connections, 0);
  });

  it('survives DNS rebinding: each connection uses the answer it checked', async () => {
    reset();
    // 127.0.0.1 stands for the public address the name first resolves to (only it is allowed);
    // every later answer is a private address.
    const lookup = scriptedLookup(['127.0.0.1'], ['10.0.0.1']);
    const policy = new AddressPolicy(['127.0.0.1/32']);
    await withDispatcher(createPinnedDispatcher(policy, { lookup }), async (dispatcher) => {
      // `reset: true` closes the connection after the request, so the second request must
      // resolve and connect again.
      const first = await request(`http://${host}:${port}/one`, { dispatcher, reset: true });
      assert.equal(first.statusCode, 200);
      await first.body.dump();
      assert.deepEqual(lookup.calls, [host]);

      await expectDenied(request(`http://${host}:${port}/two`, { dispatcher }), '10.0.0.1');
      assert.deepEqual(lookup.calls, [host, host]);
    });
    assert.deepEqual(
      seen.map((s) => s.url),
      ['/one'],
    );
    assert.equal(connections, 1);
  });

  it('tries the next checked address when one is unreachable', async () => {
    reset();
    // Nothing listens on 127.0.0.2 (the server is bound to 127.0.0.1), so that connect is refused.
    const lookup = scriptedLookup(['127.0.0.2', '127.0.0.1']);
    const policy = new AddressPolicy(['127.0.0.0/8']);
    await withDispatcher(createPinnedDispatcher(policy, { lookup }), async (dispatcher) => {
      const res = await request(`http://${host}:${port}/hook`, { dispatcher });
      assert.equal(res.statusCode, 200);
      await res.body.dump();
    });
    assert.deepEqual(lookup.calls, [host]);
    assert.equal(seen.length, 1);
  });

  it('passes a resolver failure through', async () => {
    const lookup = async (hostname: string): Promise<string[]> => {
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    };
    await withDispatcher(createPinnedDispatcher(new AddressPolicy(), { lookup }), async (dispatcher) => {
      await assert.rejects(request(`http://${host}:${port}/hook`, { dispatcher }), { code: 'ENOTFOUND' });
    });
  });
});

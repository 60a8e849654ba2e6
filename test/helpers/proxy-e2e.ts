import { after, before } from 'node:test';
import type { Hook } from '../../src/hook/hook.js';
import { api, startHookd, type TestDaemon } from './hookd.js';
import { createHook, type Receiver, startReceiver, startUpstream, type Upstream } from './servers.js';

/**
 * A real hookd in front of a real upstream, with a receiver for its callbacks: what an end-to-end
 * suite of what hooks select and send runs against. The parts are there once the suite's `before`
 * has run, so a test reads them through this object, not at module load.
 */
export interface ProxyE2e {
  readonly upstream: Upstream;
  readonly receiver: Receiver;
  readonly d: TestDaemon;
  /** Creates a hook on the daemon (a 201 asserted). */
  hook(body: Record<string, unknown>): Promise<Hook>;
  /** The hook's deliveries, as `GET /hooks/ID/deliveries` lists them. */
  deliveriesOf<T>(id: string): Promise<T[]>;
}

/**
 * Registers the suite's `before` (upstream, receiver, then hookd proxying to the upstream) and
 * `after` (closing them in the reverse order).
 */
export function proxyE2e(): ProxyE2e {
  let parts: { upstream: Upstream; receiver: Receiver; d: TestDaemon } | undefined;
  const got = () => {
    if (parts === undefined) throw new Error('proxyE2e: read before the suite started it');
    return parts;
  };
  let upstream: Upstream | undefined;
  let receiver: Receiver | undefined;
  let d: TestDaemon | undefined;
  before(async () => {
    upstream = await startUpstream();
    receiver = await startReceiver();
    d = await startHookd({ upstream: upstream.url });
    parts = { upstream, receiver, d };
  });
  after(async () => {
    await d?.close();
    await receiver?.close();
    await upstream?.close();
  });
  return {
    get upstream() {
      return got().upstream;
    },
    get receiver() {
      return got().receiver;
    },
    get d() {
      return got().d;
    },
    hook: (body) => createHook(got().d, body),
    deliveriesOf: async <T>(id: string) => {
      const { d } = got();
      return (await api<T[]>(d.url, d.token, 'GET', `/hooks/${id}/deliveries`)).body;
    },
  };
}

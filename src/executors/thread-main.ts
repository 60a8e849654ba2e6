/**
 * A delivery thread: transports and their connections, nothing else. It takes batches of rendered,
 * signed attempts from the core, sends each through the transport of its scheme, and answers with
 * the outcomes, batched per turn of its event loop. Retries, limits, ordering and the store stay
 * with the core, so a receiver's limit is the same whatever the number of threads.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { TlsConnectOptions } from '../client-tls/index.js';
import { connectTunnel } from '../egress/index.js';
import { AddressPolicy, SwitchablePolicy } from '../policy/index.js';
import {
  type SendOutcome,
  type TransportAttempt,
  TransportRegistry,
  TransportSet,
} from '../transports/index.js';
import type { FromThread, ThreadSettings, ToThread, WireAttempt } from './wire.js';

const port = parentPort;
if (port === null) throw new Error('thread-main.js runs in a delivery thread');
const settings = workerData as ThreadSettings;
const post = (m: FromThread): void => port.postMessage(m);

const policy = new SwitchablePolicy(new AddressPolicy(settings.allowCallbackNets));
const tunnel = settings.egressProxy === undefined ? undefined : connectTunnel(settings.egressProxy);
const transports = new TransportSet(new TransportRegistry(), {
  policy,
  lookup: undefined,
  timeoutMs: settings.timeoutMs,
  connectTimeoutMs: settings.connectTimeoutMs,
  perReceiver: settings.perReceiver,
  ...(tunnel && { tunnel }),
  log: (level, msg, fields) => post({ t: 'log', level, msg, ...(fields && { fields }) }),
  onReconnect: (receiverKey) => post({ t: 'reconnect', receiverKey }),
});
const cut = new AbortController();
const tlsById = new Map<string, TlsConnectOptions>();

let ns: number[] = [];
let outcomes: SendOutcome[] = [];
let flushing = false;
const flush = (): void => {
  flushing = false;
  post({ t: 'done', ns, outcomes });
  ns = [];
  outcomes = [];
};
const answer = (n: number, outcome: SendOutcome): void => {
  ns.push(n);
  outcomes.push(outcome);
  if (!flushing) {
    flushing = true;
    setImmediate(flush);
  }
};

function send(w: WireAttempt): void {
  if (w.tls !== undefined && w.tlsId !== undefined) tlsById.set(w.tlsId, w.tls);
  const tls = w.tls ?? (w.tlsId === undefined ? undefined : tlsById.get(w.tlsId));
  const attempt: TransportAttempt = {
    id: w.id,
    url: w.url,
    method: w.method,
    headers: w.headers,
    body: w.body,
    contentType: w.contentType,
    sentAt: w.sentAt,
    signal: cut.signal,
    ...(tls !== undefined && { tls }),
  };
  transports.send(w.protocol, attempt).then(
    (outcome) => answer(w.n, outcome),
    (err: unknown) =>
      answer(w.n, {
        kind: 'retry',
        text: `not sent: the delivery thread failed: ${(err as Error).message ?? String(err)}`,
        latencyMs: Date.now() - w.sentAt,
      }),
  );
}

port.on('message', (m: ToThread) => {
  switch (m.t) {
    case 'send':
      for (const w of m.attempts) send(w);
      return;
    case 'abort':
      cut.abort();
      transports.abortAll();
      return;
    case 'policy':
      policy.set(new AddressPolicy(m.allowCallbackNets));
      return;
    case 'close':
      void transports.close().finally(() => {
        if (flushing) flush();
        post({ t: 'closed' });
        port.close();
      });
      return;
  }
});
post({ t: 'ready' });

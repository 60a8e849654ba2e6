/**
 * What crosses between the delivery core and its delivery threads: plain data only, batched per
 * event-loop turn, because one `postMessage` costs about as much as sixteen attempts' worth of
 * structured cloning (docs/BENCHMARKS.md, "Delivery threads").
 */
import type { TlsConnectOptions } from '../client-tls/index.js';
import type { EgressProxy } from '../egress/index.js';
import type { SendOutcome, TransportAttempt } from '../transports/index.js';

/**
 * What a delivery thread needs to make its own transports: the address policy's allowed nets,
 * the egress proxy, the time limits and connections per receiver. A thread rebuilds the policy
 * and the tunnel from these, since neither can cross a thread boundary as a live object.
 */
export interface ThreadSettings {
  readonly allowCallbackNets: readonly string[];
  readonly egressProxy?: EgressProxy;
  readonly timeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly perReceiver: number;
}

/**
 * One attempt on its way to a thread: the transport attempt without its signal (each thread has
 * its own), numbered for its answer. A hook's client certificate crosses once per thread: later
 * attempts name it by `tlsId` alone.
 */
export interface WireAttempt extends Omit<TransportAttempt, 'signal' | 'tls'> {
  readonly n: number;
  readonly protocol: string;
  readonly tlsId?: string;
  readonly tls?: TlsConnectOptions;
}

export type ToThread =
  | { readonly t: 'send'; readonly attempts: readonly WireAttempt[] }
  /** Shutdown's drain time is over: every send in flight ends `aborted`. */
  | { readonly t: 'abort' }
  /** A reload changed the address policy. */
  | { readonly t: 'policy'; readonly allowCallbackNets: readonly string[] }
  | { readonly t: 'close' };

export type FromThread =
  | { readonly t: 'ready' }
  /** Answers, `ns[i]` the number of the attempt that `outcomes[i]` answers. */
  | { readonly t: 'done'; readonly ns: readonly number[]; readonly outcomes: readonly SendOutcome[] }
  | {
      readonly t: 'log';
      readonly level: 'info' | 'warn';
      readonly msg: string;
      readonly fields?: Record<string, unknown>;
    }
  | { readonly t: 'reconnect'; readonly receiverKey: string }
  | { readonly t: 'closed' };

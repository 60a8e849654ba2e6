/**
 * Fair sharing of outgoing attempts: isolation per endpoint, protection per host.
 *
 * - A global limit (`concurrency`) bounds what hookd has in flight at all.
 * - A per-host limit (`perHost`, the host being the receiver key of the callback URL: for HTTP its origin)
 *   protects each receiver host from hookd.
 * - Inside it, a per-endpoint limit (`perEndpoint`, the endpoint being the callback URL) is what
 *   one endpoint may hold: a hanging or slow endpoint fills its own few slots and never its
 *   host's, so the other endpoints of that host (every user's incoming-webhook URL on one chat
 *   vendor) keep going.
 * - Hosts with waiting attempts take free global slots in turn, and the endpoints of one host
 *   take that host's free slots in turn (round robin at both levels), so a burst to one endpoint
 *   cannot starve a single callback to another.
 * - Two circuit breakers: one per endpoint, fed by answers and time-outs (5xx, 429, no complete
 *   answer in time), and one per host, fed by connection-level failures (refused, DNS, TLS,
 *   connect time-out), which say nothing about one endpoint and everything about the host.
 */
import type { EndpointCap } from '../pace/index.js';
import { type BreakerOptions, CircuitBreaker, DEFAULT_BREAKER } from './circuit-breaker.js';

export interface FairnessLimits {
  /** Attempts in flight at once, over all hosts (default 256). */
  concurrency: number;
  /** Attempts in flight at once to one host (its receiver key; for HTTP the origin) (default 32). */
  perHost: number;
  /** Attempts in flight at once to one endpoint (callback URL) (default 8). */
  perEndpoint: number;
  breaker: BreakerOptions;
}

export const DEFAULT_LIMITS: FairnessLimits = Object.freeze({
  concurrency: 256,
  perHost: 32,
  perEndpoint: 8,
  breaker: DEFAULT_BREAKER,
});

/**
 * What an attempt taught, for the two breakers: an answer that counts as fine (`ok`), a failure
 * (`fail`: 5xx, 429, a broker's nack), no complete answer (`timeout`, also a reset), a failure to
 * reach the host at all (`unreachable`: refused, DNS, TLS, connect time-out), or nothing (`none`:
 * refused by the target policy, aborted at shutdown).
 */
export type AttemptVerdict = 'ok' | 'fail' | 'timeout' | 'unreachable' | 'none';

/** Which limit or circuit held an attempt back (metrics label, delivery log `HeldBy`). */
export type HoldKind = 'endpoint' | 'host' | 'global' | 'endpoint_circuit' | 'host_circuit';
export const HOLD_KINDS: readonly HoldKind[] = [
  'endpoint',
  'host',
  'global',
  'endpoint_circuit',
  'host_circuit',
];

/** Bits of the `probe` value handed to `run` and back to `done`. */
export const ENDPOINT_PROBE = 1;
export const HOST_PROBE = 2;

/** A FIFO that does not shift arrays: a head index, compacted now and then. */
class Fifo<T> {
  private items: (T | undefined)[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head++] = undefined;
    if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  drain(): T[] {
    const out = this.items.slice(this.head) as T[];
    this.items = [];
    this.head = 0;
    return out;
  }
}

class Endpoint<J> {
  inFlight = 0;
  /** In its host's ring of endpoints with startable work. */
  inRing = false;
  readonly queue = new Fifo<J>();
  readonly breaker: CircuitBreaker;

  constructor(
    readonly key: string,
    readonly host: Host<J>,
    breaker: BreakerOptions,
  ) {
    this.breaker = new CircuitBreaker(breaker, key);
  }
}

class Host<J> {
  inFlight = 0;
  /** In the global ring of hosts with startable work. */
  inRing = false;
  /** Jobs waiting over all its endpoints. */
  waiting = 0;
  readonly endpoints = new Map<string, Endpoint<J>>();
  /** Endpoints with waiting jobs and a free endpoint slot, in turn. */
  readonly ring = new Fifo<Endpoint<J>>();
  readonly breaker: CircuitBreaker;

  constructor(
    readonly key: string,
    breaker: BreakerOptions,
  ) {
    this.breaker = new CircuitBreaker(breaker, key);
  }
}

/** A job names its host (the URL's origin) and its endpoint (the URL). */
export interface Routed {
  origin: string;
  endpoint: string;
}

export interface BreakerView {
  /** `endpoint` (a callback URL) or `host` (an origin). */
  scope: 'endpoint' | 'host';
  destination: string;
  state: 'closed' | 'half-open' | 'open';
}

/**
 * Starts jobs within the limits. `run(job, probe)` starts one and the caller reports its end with
 * `done(job, verdict, probe)`; `shed(job, reason)` is called instead of `run` for a job whose
 * endpoint's or host's circuit is open, so it can be rescheduled without being sent. `held(job,
 * kind, key)` tells that a job had to wait, and for what.
 */
export class FairLimiter<J extends Routed> {
  private readonly hosts = new Map<string, Host<J>>();
  private readonly ring = new Fifo<Host<J>>();
  private running = 0;
  private waiting = 0;
  private paused = false;
  /** How often each limit or circuit held an attempt back, since start. */
  readonly heldCounts = Object.fromEntries(HOLD_KINDS.map((k) => [k, 0])) as Record<HoldKind, number>;

  constructor(
    private readonly limits: FairnessLimits,
    // biome-ignore lint/suspicious/noConfusingVoidType: a job that resolves to its verdict is `done` when it does; one that does not is told `done` by its runner
    private readonly run: (job: J, probe: number) => Promise<AttemptVerdict> | void,
    private readonly shed: (job: J, reason: string) => void,
    private readonly now: () => number = Date.now,
    private readonly held?: (job: J, kind: HoldKind, key: string) => void,
    /** The receiver's own pace (src/pace/): its endpoints' limit, at most `perEndpoint`. */
    private readonly cap?: EndpointCap,
  ) {}

  /** Attempts in flight, and jobs waiting for a slot. */
  get inFlight(): number {
    return this.running;
  }
  get queued(): number {
    return this.waiting;
  }

  /** Jobs waiting for a slot, per host that has any. */
  *waitingByHost(): Generator<{ host: string; waiting: number }> {
    for (const h of this.hosts.values()) if (h.waiting > 0) yield { host: h.key, waiting: h.waiting };
  }

  submit(job: J): void {
    const ep = this.endpoint(job);
    const host = ep.host;
    const now = this.now();
    if (host.breaker.blocking(now)) {
      this.hold(job, 'host_circuit', host.key);
      this.shed(job, this.openReason('host', host.key, host.breaker, now));
      this.release(ep);
      return;
    }
    if (ep.breaker.blocking(now)) {
      this.hold(job, 'endpoint_circuit', ep.key);
      this.shed(job, this.openReason('endpoint', ep.key, ep.breaker, now));
      this.release(ep);
      return;
    }
    const l = this.limits;
    if (
      !this.paused &&
      this.running < l.concurrency &&
      host.inFlight < l.perHost &&
      ep.inFlight < this.perEndpoint(host) &&
      ep.queue.length === 0
    ) {
      this.start(ep, job, now);
      return;
    }
    if (ep.inFlight >= this.perEndpoint(host) || ep.queue.length > 0) this.hold(job, 'endpoint', ep.key);
    else if (host.inFlight >= l.perHost) this.hold(job, 'host', host.key);
    else this.hold(job, 'global', 'all hosts');
    ep.queue.push(job);
    host.waiting++;
    this.waiting++;
    this.ready(ep);
  }

  /** Reports the end of a job that `run` started. */
  done(job: J, verdict: AttemptVerdict, probe: number): void {
    const host = this.hosts.get(job.origin);
    this.running--;
    if (!host) return;
    const ep = host.endpoints.get(job.endpoint);
    host.inFlight--;
    if (ep) ep.inFlight--;
    const now = this.now();
    // The host learns whether it could be reached (any answer says yes); the endpoint whether it
    // answered well. A time-out is the endpoint's failure and says nothing about the host.
    const hostOutcome =
      verdict === 'unreachable' ? 'fail' : verdict === 'ok' || verdict === 'fail' ? 'ok' : 'none';
    const epOutcome =
      verdict === 'unreachable' || verdict === 'none' ? 'none' : verdict === 'ok' ? 'ok' : 'fail';
    if (host.breaker.record(hostOutcome, (probe & HOST_PROBE) !== 0, now)) {
      // Open: whatever waits for any endpoint of this host is skipped now.
      const reason = this.openReason('host', host.key, host.breaker, now);
      for (const e of host.endpoints.values()) this.shedQueue(e, reason, 'host_circuit', host.key);
    }
    if (ep?.breaker.record(epOutcome, (probe & ENDPOINT_PROBE) !== 0, now)) {
      this.shedQueue(ep, this.openReason('endpoint', ep.key, ep.breaker, now), 'endpoint_circuit', ep.key);
    }
    if (ep) {
      this.ready(ep);
      this.release(ep);
    } else this.readyHost(host);
    this.pump();
  }

  /** A receiver's connection is back (its transport says so): its open circuits probe now. */
  reconnected(key: string): void {
    const h = this.hosts.get(key);
    if (h !== undefined)
      for (const b of [h.breaker, ...[...h.endpoints.values()].map((e) => e.breaker)]) b.probeNow(this.now());
  }

  /** Starts no more jobs until `resume`; queued ones stay queued. */
  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    this.pump();
  }
  /** The circuit state of every endpoint and host that has one other than a fresh closed circuit. */
  *breakers(): Generator<BreakerView> {
    for (const h of this.hosts.values()) {
      if (!h.breaker.pristine) yield { scope: 'host', destination: h.key, state: h.breaker.state };
      for (const e of h.endpoints.values()) {
        if (!e.breaker.pristine) yield { scope: 'endpoint', destination: e.key, state: e.breaker.state };
      }
    }
  }

  /** Removes and returns every queued job (shutdown leaves them to the store as pending). */
  drainQueued(): J[] {
    const out: J[] = [];
    for (const h of this.hosts.values()) {
      for (const e of h.endpoints.values()) for (const j of e.queue.drain()) out.push(j);
      h.waiting = 0;
    }
    this.waiting = 0;
    return out;
  }

  private hold(job: J, kind: HoldKind, key: string): void {
    this.heldCounts[kind]++;
    this.held?.(job, kind, key);
  }

  private shedQueue(ep: Endpoint<J>, reason: string, kind: HoldKind, key: string): void {
    if (ep.queue.length === 0) return;
    const skipped = ep.queue.drain();
    ep.host.waiting -= skipped.length;
    this.waiting -= skipped.length;
    for (const j of skipped) {
      this.hold(j, kind, key);
      this.shed(j, reason);
    }
  }

  private start(ep: Endpoint<J>, job: J, now: number): void {
    const host = ep.host;
    const hostPermit = host.breaker.allow(now);
    if (hostPermit === 'skip') {
      this.hold(job, 'host_circuit', host.key);
      this.shed(job, this.openReason('host', host.key, host.breaker, now));
      return;
    }
    const epPermit = ep.breaker.allow(now);
    if (epPermit === 'skip') {
      // The host's probe permit (if this was it) is handed back: nothing went out.
      if (hostPermit === 'probe') host.breaker.record('none', true, now);
      this.hold(job, 'endpoint_circuit', ep.key);
      this.shed(job, this.openReason('endpoint', ep.key, ep.breaker, now));
      return;
    }
    ep.inFlight++;
    host.inFlight++;
    this.running++;
    const probe = (epPermit === 'probe' ? ENDPOINT_PROBE : 0) | (hostPermit === 'probe' ? HOST_PROBE : 0);
    void this.run(job, probe)?.then((verdict) => this.done(job, verdict, probe));
  }

  private pump(): void {
    const l = this.limits;
    while (!this.paused && this.running < l.concurrency) {
      const host = this.ring.shift();
      if (host === undefined) return;
      host.inRing = false;
      if (host.inFlight >= l.perHost) continue;
      const ep = host.ring.shift();
      if (ep === undefined) continue;
      ep.inRing = false;
      if (ep.inFlight < this.perEndpoint(host)) {
        const job = ep.queue.shift();
        if (job !== undefined) {
          host.waiting--;
          this.waiting--;
          this.start(ep, job, this.now());
        }
      }
      this.ready(ep);
      this.release(ep);
    }
  }

  /** Puts an endpoint with startable work in its host's ring, and the host in the global ring. */
  private ready(ep: Endpoint<J>): void {
    if (!ep.inRing && ep.queue.length > 0 && ep.inFlight < this.perEndpoint(ep.host)) {
      ep.inRing = true;
      ep.host.ring.push(ep);
    }
    this.readyHost(ep.host);
  }

  private perEndpoint(host: Host<J>): number {
    return Math.min(this.limits.perEndpoint, this.cap?.limitFor(host.key) ?? this.limits.perEndpoint);
  }

  private readyHost(host: Host<J>): void {
    if (!host.inRing && host.ring.length > 0 && host.inFlight < this.limits.perHost) {
      host.inRing = true;
      this.ring.push(host);
    }
  }

  private endpoint(job: J): Endpoint<J> {
    let host = this.hosts.get(job.origin);
    if (host === undefined) {
      host = new Host<J>(job.origin, this.limits.breaker);
      this.hosts.set(job.origin, host);
    }
    let ep = host.endpoints.get(job.endpoint);
    if (ep === undefined) {
      ep = new Endpoint<J>(job.endpoint, host, this.limits.breaker);
      host.endpoints.set(job.endpoint, ep);
    }
    return ep;
  }

  /** Forgets an endpoint (and then its host) that holds nothing: no work, no breaker history. */
  private release(ep: Endpoint<J>): void {
    const host = ep.host;
    if (ep.inFlight === 0 && ep.queue.length === 0 && !ep.inRing && ep.breaker.pristine) {
      host.endpoints.delete(ep.key);
    }
    if (host.endpoints.size === 0 && host.inFlight === 0 && !host.inRing && host.breaker.pristine) {
      this.hosts.delete(host.key);
    }
  }

  private openReason(scope: 'endpoint' | 'host', key: string, b: CircuitBreaker, now: number): string {
    const when =
      b.state === 'half-open'
        ? 'a probe attempt is under way'
        : `the next probe goes out in ${Math.ceil(Math.max(0, b.openUntil - now) / 1000)} s`;
    const why =
      scope === 'host'
        ? 'repeated connection failures (refused, DNS, TLS, connect time-out)'
        : 'repeated failures (no answer in time, 5xx or 429)';
    return `not sent: the circuit for ${scope} ${key} is open after ${why}; ${when}`;
  }
}

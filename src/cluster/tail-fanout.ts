/**
 * The live tail across a cluster: fired and attempt events travel between instances on a
 * PostgreSQL notification channel, so `hookctl tail` on any instance sees the callbacks of all.
 *
 * An instance publishes only the events of users someone tails elsewhere: each instance announces
 * the owners its tail clients watch (on a control channel, when that changes and every few
 * seconds), so a cluster where nobody tails sends nothing. Events of one event-loop turn go out
 * together, packed into as few notifications as the 8000-byte payload limit allows, with one
 * statement.
 */
import type { Logger } from 'pino';
import type { PgDatabase } from '../store/postgres/index.js';

export const TAIL_CHANNEL = 'hookd_tail';
export const CONTROL_CHANNEL = 'hookd_control';

/** One tail event as the tail server takes it (its `owner` is for filtering, never sent to clients). */
export interface FanoutEvent {
  owner: string;
  [field: string]: unknown;
}

export interface TailFanoutOptions {
  db: PgDatabase;
  log: Logger;
  /** How often an instance with tail clients repeats whom they watch, ms (default 5 s). */
  announceMs?: number;
  /** Events waiting to be published beyond which new ones are dropped (default 20,000). */
  maxQueued?: number;
}

// PostgreSQL refuses payloads of 8000 bytes or more; the envelope takes a little.
const PAYLOAD_LIMIT = 7900;
// A single event larger than this has its long strings cut (a report's path may be 8 KiB).
const EVENT_LIMIT = 3000;
const CUT = 500;

interface Envelope {
  o: string;
  e?: FanoutEvent[];
  t?: 'demand' | 'hello' | 'bye';
  owners?: string[];
}

export class TailFanout {
  private readonly node: string;
  private readonly remote = new Map<string, { owners: Set<string>; until: number }>();
  private readonly localOwners = new Map<string, number>();
  private readonly listeners = new Set<(e: FanoutEvent) => void>();
  private readonly demandListeners = new Set<(wanted: boolean) => void>();
  private queue: string[] = [];
  private flushing = false;
  private scheduled = false;
  private dropped = 0;
  private timer: NodeJS.Timeout | undefined;
  private offs: (() => void)[] = [];
  private announcing = false;
  private wanted = false;

  constructor(private readonly opts: TailFanoutOptions) {
    this.node = opts.db.nodeId;
  }

  private get announceMs(): number {
    return this.opts.announceMs ?? 5000;
  }

  /** Starts listening; says hello so that instances with tail clients announce them at once. */
  async start(): Promise<void> {
    const listener = this.opts.db.listener;
    this.offs.push(
      listener.on(TAIL_CHANNEL, (p) => this.received(p)),
      listener.on(CONTROL_CHANNEL, (p) => this.control(p)),
      // Announcements sent while the connection was down are lost: ask again.
      listener.onReconnect(() => this.send({ o: this.node, t: 'hello' })),
    );
    await listener.start();
    await this.send({ o: this.node, t: 'hello' });
    this.timer = setInterval(() => {
      this.expire();
      if (this.localOwners.size > 0) void this.announce();
    }, this.announceMs);
    this.timer.unref();
  }

  /** A local tail client of `owner` came (+1) or went (-1). */
  watching(owner: string, delta: 1 | -1): void {
    const n = (this.localOwners.get(owner) ?? 0) + delta;
    const changed = n > 0 !== this.localOwners.has(owner);
    if (n > 0) this.localOwners.set(owner, n);
    else this.localOwners.delete(owner);
    if (changed) void this.announce();
  }

  /** Events published by the other instances. */
  onRemote(listener: (e: FanoutEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Told when whether any other instance wants events changes (to subscribe to local events only then). */
  onDemand(listener: (wanted: boolean) => void): () => void {
    this.demandListeners.add(listener);
    return () => this.demandListeners.delete(listener);
  }

  /** Whether another instance has a tail client of this owner. */
  wants(owner: string): boolean {
    for (const r of this.remote.values()) if (r.owners.has(owner)) return true;
    return false;
  }

  /** Queues a local event for the instances that want it; sent at the end of this turn. */
  publish(event: FanoutEvent): void {
    if (!this.wants(event.owner)) return;
    if (this.queue.length >= (this.opts.maxQueued ?? 20_000)) {
      if (this.dropped++ === 0)
        this.opts.log.warn('cluster: tail events are published slower than they come; some are dropped');
      return;
    }
    this.queue.push(encodeEvent(event));
    if (!this.scheduled && !this.flushing) {
      this.scheduled = true;
      setImmediate(() => void this.flush());
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    for (const off of this.offs) off();
    this.offs = [];
    if (this.localOwners.size > 0) await this.send({ o: this.node, t: 'bye' }).catch(() => undefined);
    this.localOwners.clear();
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    if (this.flushing) return;
    this.flushing = true;
    try {
      while (this.queue.length > 0) {
        const events = this.queue;
        this.queue = [];
        const payloads = pack(this.node, events);
        await this.opts.db.pool
          .query('SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p', [TAIL_CHANNEL, payloads])
          .catch((err: Error) =>
            this.opts.log.warn({ err: err.message }, 'cluster: publishing tail events failed'),
          );
      }
      if (this.dropped > 0) {
        this.opts.log.warn({ dropped: this.dropped }, 'cluster: tail events dropped');
        this.dropped = 0;
      }
    } finally {
      this.flushing = false;
    }
  }

  private received(payload: string): void {
    let env: Envelope;
    try {
      env = JSON.parse(payload) as Envelope;
    } catch {
      return;
    }
    if (env.o === this.node || !Array.isArray(env.e)) return;
    for (const e of env.e) {
      if (typeof e?.owner !== 'string') continue;
      for (const l of this.listeners) l(e);
    }
  }

  private control(payload: string): void {
    let env: Envelope;
    try {
      env = JSON.parse(payload) as Envelope;
    } catch {
      return;
    }
    if (env.o === this.node) return;
    if (env.t === 'hello') {
      if (this.localOwners.size > 0) void this.announce();
      return;
    }
    if (env.t === 'bye' || (env.t === 'demand' && (!env.owners || env.owners.length === 0))) {
      this.remote.delete(env.o);
    } else if (env.t === 'demand' && Array.isArray(env.owners)) {
      this.remote.set(env.o, { owners: new Set(env.owners), until: performance.now() + 3 * this.announceMs });
    }
    this.demandChanged();
  }

  private expire(): void {
    const now = performance.now();
    for (const [node, r] of this.remote) if (r.until < now) this.remote.delete(node);
    this.demandChanged();
  }

  private demandChanged(): void {
    const wanted = this.remote.size > 0;
    if (wanted === this.wanted) return;
    this.wanted = wanted;
    for (const l of this.demandListeners) l(wanted);
  }

  private async announce(): Promise<void> {
    if (this.announcing) return;
    this.announcing = true;
    // Let the rest of this turn's changes join the announcement.
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.announcing = false;
    await this.send({ o: this.node, t: 'demand', owners: [...this.localOwners.keys()] }).catch((err: Error) =>
      this.opts.log.warn({ err: err.message }, 'cluster: announcing tail clients failed'),
    );
  }

  private async send(env: Envelope): Promise<void> {
    await this.opts.db.pool.query('SELECT pg_notify($1, $2)', [CONTROL_CHANNEL, JSON.stringify(env)]);
  }
}

/** One event as JSON, with long strings cut so that it fits a notification with room to spare. */
function encodeEvent(e: FanoutEvent): string {
  const text = JSON.stringify(e);
  if (Buffer.byteLength(text) <= EVENT_LIMIT) return text;
  const cut = (v: unknown) => (typeof v === 'string' && v.length > CUT ? `${v.slice(0, CUT)}…` : v);
  const out: Record<string, unknown> = { ...e, Truncated: true };
  for (const k of Object.keys(out)) out[k] = cut(out[k]);
  const trigger = e.Trigger as Record<string, unknown> | undefined;
  if (trigger && typeof trigger === 'object') out.Trigger = { ...trigger, Path: cut(trigger.Path) };
  return JSON.stringify(out);
}

/** Packs encoded events into as few envelopes under the payload limit as fit. */
function pack(node: string, events: string[]): string[] {
  const head = `{"o":${JSON.stringify(node)},"e":[`;
  const out: string[] = [];
  let parts: string[] = [];
  let size = head.length + 2;
  for (const ev of events) {
    const n = Buffer.byteLength(ev) + 1;
    if (parts.length > 0 && size + n > PAYLOAD_LIMIT) {
      out.push(`${head}${parts.join(',')}]}`);
      parts = [];
      size = head.length + 2;
    }
    parts.push(ev);
    size += n;
  }
  if (parts.length > 0) out.push(`${head}${parts.join(',')}]}`);
  return out;
}

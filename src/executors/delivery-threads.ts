/**
 * The delivery threads of a process, seen from its core: a turn of the event loop's attempts go to
 * the thread with the fewest in flight, in one message; outcomes come back the same way. A thread that dies is replaced at once; the attempts it had in flight are sent again on
 * another thread under the same webhook-id (at-least-once, as after a crash of the process), and
 * an attempt whose second thread dies too ends as a failed attempt for the retry schedule.
 */
import { Worker } from 'node:worker_threads';
import type { TlsConnectOptions } from '../client-tls/index.js';
import type { EgressProxy } from '../egress/index.js';
import type {
  AttemptSender,
  SenderContext,
  SenderSource,
  SendOutcome,
  TransportAttempt,
} from '../transports/index.js';
import { stopThread } from '../util/index.js';
import type { FromThread, ThreadSettings, ToThread, WireAttempt } from './wire.js';

const THREAD_URL = new URL('./delivery-thread.js', import.meta.url);
/** A thread that dies this often in this window is a crash loop: it is replaced after a pause. */
const CRASH_LOOP = { deaths: 3, windowMs: 10_000, pauseMs: 1000 };
/** How long a closing thread may take to close its connections before it is terminated. */
const CLOSE_MS = 2000;
/**
 * Attempts of one turn that join one thread's message before the next turn's pick. A message to a
 * thread asleep costs its sender a wake-up, 30–55 µs of CPU on the virtual machines measured
 * (`bench/crossing.ts`), as much as an HTTP attempt; one to a thread awake costs 2–3 µs. So a
 * turn's attempts wake one thread, not each, and the load spreads from turn to turn.
 */
const TURN_BATCH = 32;

export interface DeliveryThreadsOptions {
  /** Threads to run, at least 1. */
  readonly count: number;
  /** The address policy's allowed nets (`--allow-callback-net`). */
  readonly allowCallbackNets: readonly string[];
  /** Every callback leaves through this proxy (`--callback-proxy`). */
  readonly egressProxy?: EgressProxy;
}

/** One thread's counts since the daemon started, over every thread that held its place. */
export interface ThreadCounts {
  readonly attempts: number;
  readonly busySeconds: number;
}

export interface ThreadStats {
  readonly running: number;
  readonly configured: number;
  readonly threads: readonly ThreadCounts[];
}

interface Pending {
  readonly wire: Omit<WireAttempt, 'tls' | 'tlsId'>;
  readonly tls: TlsConnectOptions | undefined;
  readonly resolve: (o: SendOutcome) => void;
  /** Sent again after its thread died. */
  resent: boolean;
}

class Slot {
  worker: Worker | undefined;
  ready = false;
  readonly inFlight = new Map<number, Pending>();
  batch: WireAttempt[] = [];
  /** Client certificates this thread already holds, by identity. */
  tlsSent = new Set<string>();
  attempts = 0;
  /** Busy time of the threads that held this place before, ms. */
  busyBeforeMs = 0;
  /**
   * The running thread's busy time when last read, ms: a thread that has exited reads as zero, so
   * its last reading is what it adds to `busyBeforeMs`.
   */
  busyNowMs = 0;
  busyReadAt = 0;
  deaths: number[] = [];

  constructor(readonly index: number) {}

  busyMs(): number {
    if (this.worker !== undefined) {
      this.busyNowMs = Math.max(this.busyNowMs, this.worker.performance.eventLoopUtilization().active);
      this.busyReadAt = Date.now();
    }
    return this.busyBeforeMs + this.busyNowMs;
  }

  /** Reads the busy time at most once a second, so that a death loses at most that much of it. */
  sampleBusy(now: number): void {
    if (now - this.busyReadAt >= 1000) this.busyMs();
  }

  /** The thread in this place exited: its busy time is kept. */
  retire(): void {
    this.busyBeforeMs += this.busyNowMs;
    this.busyNowMs = 0;
    this.worker = undefined;
    this.ready = false;
  }
}

export class DeliveryThreads implements SenderSource, AttemptSender {
  readonly configured: number;
  readonly #slots: Slot[];
  #ctx: SenderContext | undefined;
  #settings: ThreadSettings | undefined;
  #allow: readonly string[];
  #next = 1;
  #flushing = false;
  /** The thread this turn's attempts join, until its batch holds `TURN_BATCH`. */
  #turn: Slot | undefined;
  #closing = false;
  /** Attempts waiting for a thread while every thread is being replaced. */
  #parked: Pending[] = [];

  constructor(private readonly opts: DeliveryThreadsOptions) {
    if (!Number.isInteger(opts.count) || opts.count < 1)
      throw new Error('delivery threads: count must be at least 1');
    this.configured = opts.count;
    this.#allow = opts.allowCallbackNets;
    this.#slots = Array.from({ length: opts.count }, (_, i) => new Slot(i));
  }

  /** Starts the threads with the pipeline's limits; attempts sent before a thread is up wait in its queue. */
  open(ctx: SenderContext): AttemptSender {
    if (this.#ctx !== undefined) throw new Error('delivery threads are opened once');
    this.#ctx = ctx;
    this.#settings = {
      allowCallbackNets: this.#allow,
      ...(this.opts.egressProxy && { egressProxy: this.opts.egressProxy }),
      timeoutMs: ctx.timeoutMs,
      connectTimeoutMs: ctx.connectTimeoutMs,
      perReceiver: ctx.perReceiver,
    };
    for (const slot of this.#slots) this.#spawn(slot);
    return this;
  }

  send(protocol: string, attempt: TransportAttempt): Promise<SendOutcome> {
    if (this.#closing || this.#ctx === undefined) {
      return Promise.resolve({
        kind: 'retry',
        text: 'not sent: hookd is shutting down',
        latencyMs: 0,
        aborted: true,
      });
    }
    const { signal: _signal, tls, ...rest } = attempt;
    return new Promise<SendOutcome>((resolve) => {
      this.#dispatch({ wire: { ...rest, n: this.#next++, protocol }, tls, resolve, resent: false });
    });
  }

  abortAll(): void {
    this.#broadcast({ t: 'abort' });
  }

  /** A reload changed `--allow-callback-net`: every thread, and every thread made later, takes it. */
  setAllowedNets(allowCallbackNets: readonly string[]): void {
    this.#allow = allowCallbackNets;
    if (this.#settings !== undefined) this.#settings = { ...this.#settings, allowCallbackNets };
    this.#broadcast({ t: 'policy', allowCallbackNets });
  }

  /** Ends one thread as a crash would: it is replaced and its attempts in flight go again. */
  terminate(index: number): Promise<number> {
    const worker = this.#slots[index]?.worker;
    if (worker === undefined) return Promise.resolve(0);
    return worker.terminate();
  }

  stats(): ThreadStats {
    return {
      running: this.#slots.filter((s) => s.ready).length,
      configured: this.configured,
      threads: this.#slots.map((s) => ({ attempts: s.attempts, busySeconds: s.busyMs() / 1000 })),
    };
  }

  async close(): Promise<void> {
    if (this.#closing) return;
    this.#closing = true;
    this.#flush();
    await Promise.all(this.#slots.map((s) => this.#closeSlot(s)));
    for (const p of this.#parked.splice(0)) p.resolve(shutDown(p));
  }

  #dispatch(p: Pending): void {
    const turn = this.#turn;
    const slot =
      turn !== undefined && turn.worker !== undefined && turn.batch.length < TURN_BATCH ? turn : this.#pick();
    this.#turn = slot;
    if (slot === undefined) {
      this.#parked.push(p);
      return;
    }
    slot.inFlight.set(p.wire.n, p);
    slot.attempts++;
    const tls = p.tls;
    let wire: WireAttempt = p.wire;
    if (tls !== undefined) {
      const first = !slot.tlsSent.has(tls.identity);
      if (first) slot.tlsSent.add(tls.identity);
      wire = { ...p.wire, tlsId: tls.identity, ...(first && { tls }) };
    }
    slot.batch.push(wire);
    if (!this.#flushing) {
      this.#flushing = true;
      setImmediate(() => this.#flush());
    }
  }

  /** The thread with the fewest attempts in flight; undefined while none is running. */
  #pick(): Slot | undefined {
    let best: Slot | undefined;
    for (const s of this.#slots) {
      if (s.worker === undefined) continue;
      if (best === undefined || s.inFlight.size < best.inFlight.size) best = s;
    }
    return best;
  }

  #flush(): void {
    this.#flushing = false;
    this.#turn = undefined;
    for (const s of this.#slots) {
      if (s.batch.length === 0 || s.worker === undefined) continue;
      const m: ToThread = { t: 'send', attempts: s.batch };
      s.batch = [];
      s.worker.postMessage(m);
    }
  }

  #broadcast(m: ToThread): void {
    for (const s of this.#slots) s.worker?.postMessage(m);
  }

  #spawn(slot: Slot): void {
    const worker = new Worker(THREAD_URL, {
      workerData: this.#settings,
      name: `hookd sender ${slot.index}`,
    });
    worker.unref();
    slot.worker = worker;
    slot.ready = false;
    slot.tlsSent = new Set();
    worker.on('message', (m: FromThread) => this.#heard(slot, m));
    worker.on('error', (err) =>
      this.#ctx?.log('warn', 'a delivery thread failed', { thread: slot.index, err }),
    );
    worker.once('exit', (code) => this.#died(slot, worker, code));
    for (const p of this.#parked.splice(0)) this.#dispatch(p);
  }

  #heard(slot: Slot, m: FromThread): void {
    switch (m.t) {
      case 'done':
        slot.sampleBusy(Date.now());
        for (let i = 0; i < m.ns.length; i++) {
          const n = m.ns[i]!;
          const p = slot.inFlight.get(n);
          if (p === undefined) continue;
          slot.inFlight.delete(n);
          p.resolve(m.outcomes[i]!);
        }
        return;
      case 'ready':
        slot.ready = true;
        return;
      case 'log':
        this.#ctx?.log(m.level, m.msg, { ...m.fields, thread: slot.index });
        return;
      case 'reconnect':
        this.#ctx?.onReconnect?.(m.receiverKey);
        return;
      case 'closed':
        return;
    }
  }

  #died(slot: Slot, worker: Worker, code: number): void {
    if (slot.worker !== worker) return;
    slot.retire();
    // Attempts batched for it but not yet posted are still only in `inFlight`.
    slot.batch = [];
    const lost = [...slot.inFlight.values()];
    slot.inFlight.clear();
    if (this.#closing) {
      for (const p of lost) p.resolve(shutDown(p));
      return;
    }
    this.#ctx?.log('warn', 'a delivery thread stopped; it is replaced and its attempts in flight go again', {
      thread: slot.index,
      exitCode: code,
      inFlight: lost.length,
    });
    const now = Date.now();
    slot.deaths = [...slot.deaths.filter((t) => now - t < CRASH_LOOP.windowMs), now];
    const replace = () => {
      if (!this.#closing) this.#spawn(slot);
    };
    for (const p of lost) {
      if (p.resent) {
        p.resolve({
          kind: 'retry',
          text: 'not answered: the delivery threads sending it stopped twice',
          latencyMs: Date.now() - p.wire.sentAt,
          timedOut: true,
        });
      } else {
        p.resent = true;
        this.#dispatch(p);
      }
    }
    if (slot.deaths.length >= CRASH_LOOP.deaths) setTimeout(replace, CRASH_LOOP.pauseMs).unref();
    else replace();
  }

  async #closeSlot(slot: Slot): Promise<void> {
    const worker = slot.worker;
    if (worker === undefined) return;
    await stopThread(worker, { t: 'close' } satisfies ToThread, CLOSE_MS);
  }
}

function shutDown(p: Pending): SendOutcome {
  return {
    kind: 'retry',
    text: 'not sent: hookd is shutting down',
    latencyMs: Date.now() - p.wire.sentAt,
    aborted: true,
  };
}

import {
  AggregatorRegistry,
  Counter,
  collectDefaultMetrics,
  Gauge,
  Histogram,
  type MetricObjectWithValues,
  type MetricValue,
  Registry,
} from 'prom-client';

/** One registry's metrics as plain data (`getMetricsAsJSON`), what a worker sends its primary. */
export type MetricsSnapshot = MetricObjectWithValues<MetricValue<string>>[];

export interface MetricsSources {
  /** Deliveries waiting for an attempt (the outbox depth). */
  outboxDepth?: () => number;
  /** Per-endpoint and per-host circuit breakers: 0 closed, 1 half-open, 2 open. */
  breakers?: () => Iterable<{ scope?: string; destination: string; state: 'closed' | 'half-open' | 'open' }>;
  hooks?: () => number;
  tailClients?: () => number;
  /** Filter evaluation errors since start (each one a hook that did not fire). */
  filterErrors?: () => number;
}

const BREAKER_VALUE = { closed: 0, 'half-open': 1, open: 2 } as const;

/**
 * hookd's Prometheus metrics (prom-client), one registry per daemon so that tests can run several
 * daemons in one process. Counters are bumped by the proxy, the engine and the delivery pipeline;
 * gauges are read from their owners at scrape time.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly proxiedCounts = new Map<number, number>();
  private readonly firedTotal: Counter<'phase'>;
  private readonly attemptsTotal: Counter<'outcome'>;
  private readonly deadLetters: Counter;
  private readonly loopsCut: Counter<'kind'>;
  private readonly attemptSeconds: Histogram<'outcome'>;
  private readonly rateDelays: Counter;
  private readonly rateWaitSeconds: Counter;
  private readonly namesRefused: Counter;
  private readonly hookChanges: Counter<'source' | 'result'>;
  private others: (() => Promise<MetricsSnapshot[]>) | undefined;

  constructor(version: string, sources: MetricsSources = {}) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'hookd_' });
    new Gauge({
      name: 'hookd_build_info',
      help: 'hookd version and Node.js version',
      labelNames: ['version', 'node'],
      registers,
      // Merged with the workers': one daemon, one build.
      aggregator: 'first',
    }).set({ version, node: process.version }, 1);
    // Counted in a plain Map and handed to prom-client at scrape time: `inc({ status })` hashes
    // its labels on every call, and this one is bumped for every proxied request.
    const proxied = this.proxiedCounts;
    new Counter({
      name: 'hookd_proxied_requests_total',
      help: 'Requests proxied to the upstream, by response status (hookd-made 502/504 included)',
      labelNames: ['status'],
      registers,
      collect() {
        this.reset();
        for (const [status, n] of proxied) this.inc({ status: String(status) }, n);
      },
    });
    this.firedTotal = new Counter({
      name: 'hookd_hooks_fired_total',
      help: 'Hooks that matched a request and fired, by phase (before/after completion)',
      labelNames: ['phase'],
      registers,
    });
    this.attemptsTotal = new Counter({
      name: 'hookd_delivery_attempts_total',
      help: 'Callback attempts by outcome (succeeded, retrying: failed, will retry, failed: gave up) and transport (http, amqp, mqtt, nats, redis)',
      labelNames: ['outcome', 'transport'],
      registers,
    });
    this.loopsCut = new Counter({
      name: 'hookd_loops_cut_total',
      help: "Requests that reached the proxy as a loop: hookd's own callbacks and notifications (fired nothing), or too many passes (refused 508)",
      labelNames: ['kind'],
      registers,
    });
    this.deadLetters = new Counter({
      name: 'hookd_dead_letters_total',
      help: 'Deliveries that failed for good after their last attempt',
      registers,
    });
    this.attemptSeconds = new Histogram({
      name: 'hookd_delivery_attempt_duration_seconds',
      help: 'Latency of callback attempts, by outcome and transport',
      labelNames: ['outcome', 'transport'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15],
      registers,
    });
    this.rateDelays = new Counter({
      name: 'hookd_rate_limit_delays_total',
      help: "Callback attempts held back by their hook's RateLimit (each waited, none was dropped)",
      registers,
    });
    this.rateWaitSeconds = new Counter({
      name: 'hookd_rate_limit_wait_seconds_total',
      help: "Time callback attempts waited for their hook's RateLimit",
      registers,
    });
    this.namesRefused = new Counter({
      name: 'hookd_identity_names_refused_total',
      help: 'Proxied requests whose identity provider named no valid hookd user (or admin): anonymous for hooks',
      registers,
    });
    this.hookChanges = new Counter({
      name: 'hookd_hook_changes_total',
      help: "Hook changes the match index was given, by source (here: made by this instance; database: announced by the shared database, this instance's own included) and result (applied, or current: the index held that version already)",
      labelNames: ['source', 'result'],
      registers,
    });
    this.observe(sources);
  }

  /** A hook change offered to the match index (src/daemon/hook-following.ts). */
  hookChange(source: 'here' | 'database', result: 'applied' | 'current'): void {
    this.hookChanges.inc({ source, result });
  }

  /** Gauges read from their owners at scrape time, registered by each owner once it is made. */
  observe(sources: MetricsSources): void {
    const registers = [this.registry];
    const gauge = (name: string, help: string, read?: () => number) => {
      if (!read) return;
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(read());
        },
      });
    };
    gauge('hookd_outbox_depth', 'Deliveries waiting for an attempt', sources.outboxDepth);
    gauge('hookd_hooks', 'Hooks in the match index', sources.hooks);
    gauge('hookd_tail_clients', 'Connected live-tail clients', sources.tailClients);
    if (sources.filterErrors) {
      const read = sources.filterErrors;
      new Counter({
        name: 'hookd_filter_errors_total',
        help: "Filter evaluations that failed (a missing key, a wrong type): each counted as no match and shown as the hook's LastFilterError",
        registers,
        collect() {
          this.reset();
          this.inc(read());
        },
      });
    }
    if (sources.breakers) {
      const read = sources.breakers;
      new Gauge({
        name: 'hookd_breaker_state',
        help: 'Circuit breaker per endpoint (callback URL) and per host (origin): 0 closed, 1 half-open, 2 open',
        labelNames: ['destination', 'scope'],
        registers,
        collect() {
          this.reset();
          for (const b of read())
            this.set({ destination: b.destination, scope: b.scope ?? 'host' }, BREAKER_VALUE[b.state]);
        },
      });
    }
  }

  /** A loop cut by the proxy (src/loops/): `callback`/`notification` (hookd's own), `hops`. */
  loopCut(kind: 'callback' | 'notification' | 'hops'): void {
    this.loopsCut.inc({ kind });
  }

  proxied(status: number): void {
    this.proxiedCounts.set(status, (this.proxiedCounts.get(status) ?? 0) + 1);
  }

  fired(phase: 'before' | 'after', count: number): void {
    if (count > 0) this.firedTotal.inc({ phase }, count);
  }

  /** `transport`: the Callback's transport family (`http` for http: and https:). */
  attempt(outcome: 'succeeded' | 'retrying' | 'failed', latencyMs: number, transport: string): void {
    const labels = { outcome, transport };
    this.attemptsTotal.inc(labels);
    this.attemptSeconds.observe(labels, latencyMs / 1000);
    if (outcome === 'failed') this.deadLetters.inc();
  }

  /** An attempt waits `ms` for its hook's rate limit. */
  rateLimited(ms: number): void {
    this.rateDelays.inc();
    this.rateWaitSeconds.inc(ms / 1000);
  }

  /** A proxied request's provider name was not a hookd user name: the request counts as anonymous. */
  identityNameRefused(): void {
    this.namesRefused.inc();
  }

  /**
   * With workers, `text()` merges in what `others` answers (each worker's snapshot and
   * what departed workers counted) by prom-client's cluster rules: counters and histograms summed,
   * every other metric by its `aggregator` (docs/DECISIONS.md "Metrics with workers").
   */
  mergeWith(others: () => Promise<MetricsSnapshot[]>): void {
    this.others = others;
  }

  snapshot(): Promise<MetricsSnapshot> {
    return this.registry.getMetricsAsJSON();
  }

  async text(): Promise<string> {
    if (!this.others) return this.registry.metrics();
    const all = [await this.snapshot(), ...(await this.others())];
    return AggregatorRegistry.aggregate(all).metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

import type { FastifyInstance } from 'fastify';
import { OWNER_BUCKET_MS, quantile } from '../../store/delivery-aggregates.js';
import { html } from '../html.js';
import { page, time } from '../layout.js';
import type { PageDeps } from '../page-deps.js';
import { sendHtml, sessionOf } from '../respond.js';

const WINDOWS: [string, number][] = [
  ['Last hour', 3_600_000],
  ['Last 24 hours', 86_400_000],
  ['Last 7 days', 7 * 86_400_000],
];

const ms = (v: number | null) => (v === null ? '–' : v < 10 ? `${v.toFixed(1)} ms` : `${Math.round(v)} ms`);

/** The figures of the overview, all from the store's rollups (docs/BENCHMARKS.md "Console overview"). */
export async function overviewData(deps: PageDeps, user: string, now = Date.now()) {
  const floor = (t: number) => t - (t % OWNER_BUCKET_MS);
  const windows = await Promise.all(
    WINDOWS.map(async ([label, width]) => {
      const since = floor(now - width) + OWNER_BUCKET_MS;
      const [t, hist] = await Promise.all([
        deps.aggregates.totals(user, since),
        deps.aggregates.latency(user, since),
      ]);
      const done = t.succeeded + t.failed;
      return {
        label,
        ...t,
        rate: done === 0 ? null : t.succeeded / done,
        p50: quantile(hist, 0.5),
        p95: quantile(hist, 0.95),
      };
    }),
  );
  const since = floor(now - 86_400_000) + OWNER_BUCKET_MS;
  const [pending, series] = await Promise.all([
    deps.aggregates.pending(user),
    deps.aggregates.series(user, since),
  ]);
  // Every bucket of the last 24 hours, empty ones as zero, for the chart.
  const x: number[] = [];
  const ok: number[] = [];
  const failed: number[] = [];
  const by = new Map(series.map((b) => [b.bucket, b]));
  for (let b = since; b <= floor(now); b += OWNER_BUCKET_MS) {
    x.push(b / 1000);
    ok.push(by.get(b)?.succeeded ?? 0);
    failed.push(by.get(b)?.failed ?? 0);
  }
  return { windows, pending, chart: { x, ok, failed } };
}

export function overviewPage(app: FastifyInstance, deps: PageDeps): void {
  app.get('/', async (req, reply) => {
    const { ctx } = sessionOf(req);
    const now = Date.now();
    const data = await overviewData(deps, ctx.user, now);
    const hosts = new Set<string>();
    for (const h of (await deps.hooks.list(ctx.user)).items) {
      try {
        hosts.add(new URL(h.Callback).host);
      } catch {
        // A stored hook always has a valid URL; nothing to add otherwise.
      }
    }
    const breakers = [...deps.pipeline.breakers()].filter(
      (b) => b.state !== 'closed' && [...hosts].some((h) => b.destination.includes(h)),
    );
    const body = html`
<section aria-labelledby="h-deliveries">
<h2 id="h-deliveries">Deliveries</h2>
<div class="cards">
${data.windows.map(
  (w) => html`<div class="card"><h3>${w.label}</h3>
<dl>
<dt>Delivered</dt><dd data-figure="delivered">${w.succeeded}</dd>
<dt>Failed</dt><dd data-figure="failed">${w.failed}</dd>
<dt>Success rate</dt><dd>${w.rate === null ? '–' : `${(w.rate * 100).toFixed(1)} %`}</dd>
<dt>Attempt latency p50</dt><dd>${ms(w.p50)}</dd>
<dt>Attempt latency p95</dt><dd>${ms(w.p95)}</dd>
</dl></div>`,
)}
<div class="card"><h3>Outbox</h3>
<dl>
<dt>Pending deliveries</dt><dd data-figure="pending">${data.pending.count}</dd>
<dt>Oldest pending</dt><dd>${data.pending.oldest === null ? '–' : html`${age(now - data.pending.oldest)} (${time(data.pending.oldest)})`}</dd>
<dt>Open circuit breakers</dt><dd>${breakers.length === 0 ? 'none' : breakers.map((b) => html`<span class="badge failed">${b.destination} ${b.state}</span> `)}</dd>
</dl></div>
</div>
</section>
<section aria-labelledby="h-chart">
<h2 id="h-chart">Outcomes over the last 24 hours (5-minute buckets)</h2>
<div id="chart" class="chart" data-chart="${JSON.stringify(data.chart)}" role="img" aria-label="Stacked chart of delivered and failed deliveries per 5 minutes over the last 24 hours"></div>
</section>`;
    return sendHtml(reply, page(ctx, 'Overview', 'overview', body));
  });
}

export function age(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  if (s < 172800) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86400)} d`;
}

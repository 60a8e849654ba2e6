import type { FastifyInstance } from 'fastify';
import { type DeliveryQuery, OWNER_BUCKET_MS, quantile } from '../../store/index.js';
import { html } from '../html.js';
import { page, time } from '../layout.js';
import type { PageDeps } from '../page-deps.js';
import { sendHtml, sessionOf } from '../respond.js';

const WINDOWS: [string, number][] = [
  ['Last hour', 3_600_000],
  ['Last 24 hours', 86_400_000],
  ['Last 7 days', 7 * 86_400_000],
];

/** At most this many notification deliveries per endpoint are looked at (they are few: events about hooks). */
const NOTIFICATION_SCAN = 20_000;

const ms = (v: number | null) => (v === null ? '–' : v < 10 ? `${v.toFixed(1)} ms` : `${Math.round(v)} ms`);

interface Finished {
  created: number;
  succeeded: boolean;
}

/**
 * The user's notification deliveries (to their notification endpoints) since a time: the rollups
 * count them under the same owner as hook deliveries, and the overview is about hooks.
 */
async function notificationDeliveries(deps: PageDeps, user: string, since: number): Promise<Finished[]> {
  const ids = deps.notificationEndpoints?.(user) ?? [];
  const out: Finished[] = [];
  for (const id of ids) {
    for (const status of ['succeeded', 'failed'] as const) {
      const q: DeliveryQuery = { status, since, limit: 1000 };
      for (let seen = 0; seen < NOTIFICATION_SCAN; ) {
        const pg = await deps.pipeline.list(id, q);
        for (const d of pg.items) out.push({ created: d.created, succeeded: status === 'succeeded' });
        seen += pg.items.length;
        if (pg.next === undefined) break;
        q.after = pg.next;
      }
    }
  }
  return out;
}

/** The figures of the overview, all from the store's rollups (docs/BENCHMARKS.md "Console overview"). */
export async function overviewData(deps: PageDeps, user: string, now = Date.now()) {
  const floor = (t: number) => t - (t % OWNER_BUCKET_MS);
  const oldest = floor(now - WINDOWS[WINDOWS.length - 1]![1]) + OWNER_BUCKET_MS;
  const notes = await notificationDeliveries(deps, user, oldest);
  const windows = await Promise.all(
    WINDOWS.map(async ([label, width]) => {
      const since = floor(now - width) + OWNER_BUCKET_MS;
      const [t, hist] = await Promise.all([
        deps.aggregates.totals(user, since),
        deps.aggregates.latency(user, since),
      ]);
      let noteOk = 0;
      let noteFailed = 0;
      for (const n of notes)
        if (n.created >= since) {
          if (n.succeeded) noteOk++;
          else noteFailed++;
        }
      const succeeded = Math.max(0, t.succeeded - noteOk);
      const failed = Math.max(0, t.failed - noteFailed);
      const done = succeeded + failed;
      return {
        label,
        ...t,
        succeeded,
        failed,
        notifications: noteOk + noteFailed,
        rate: done === 0 ? null : succeeded / done,
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
  const by = new Map(series.map((b) => [b.bucket, { ...b }]));
  for (const n of notes) {
    const b = by.get(floor(n.created));
    if (!b) continue;
    if (n.succeeded) b.succeeded = Math.max(0, b.succeeded - 1);
    else b.failed = Math.max(0, b.failed - 1);
  }
  let total = 0;
  for (let b = since; b <= floor(now); b += OWNER_BUCKET_MS) {
    x.push(b / 1000);
    ok.push(by.get(b)?.succeeded ?? 0);
    failed.push(by.get(b)?.failed ?? 0);
    total += (by.get(b)?.succeeded ?? 0) + (by.get(b)?.failed ?? 0);
  }
  return { windows, pending, chart: { x, ok, failed }, empty: total === 0 };
}

export function overviewPage(app: FastifyInstance, deps: PageDeps): void {
  app.get('/', async (req, reply) => {
    const { ctx } = sessionOf(req);
    const now = Date.now();
    const data = await overviewData(deps, ctx.user, now);
    const hosts = new Set<string>();
    const mine = (await deps.hooks.list(ctx.user)).items;
    for (const h of mine) {
      try {
        hosts.add(new URL(h.Callback).host);
      } catch {
        // A stored hook always has a valid URL; nothing to add otherwise.
      }
    }
    const breakers = [...deps.pipeline.breakers()].filter(
      (b) => b.state !== 'closed' && [...hosts].some((h) => b.destination.includes(h)),
    );
    const anyDelivery = data.windows.some((w) => w.succeeded + w.failed > 0) || data.pending.count > 0;
    const body = html`
${
  anyDelivery
    ? ''
    : html`<div class="empty" id="welcome"><p><strong>No data yet.</strong> ${
        mine.length === 0
          ? html`You have no hooks. <a href="${deps.root}/hooks/new">Create your first hook</a>: it fires when a request through hookd matches its pattern, and its deliveries show up here.`
          : html`You have ${mine.length} hook${mine.length === 1 ? '' : 's'}, and none has fired in the last 7 days. Send a request through hookd that matches one, or open a hook and use <em>Send a test event</em>; then watch it on <a href="${deps.root}/live">Live</a>.`
      }</p></div>`
}
<section aria-labelledby="h-deliveries">
<h2 id="h-deliveries">Deliveries of your hooks</h2>
<div class="cards">
${data.windows.map(
  (w) => html`<div class="card"><h3>${w.label}</h3>
<dl>
<dt>Delivered</dt><dd data-figure="delivered">${w.succeeded}</dd>
<dt>Failed</dt><dd data-figure="failed">${w.failed}</dd>
<dt>Success rate</dt><dd>${w.rate === null ? '–' : `${(w.rate * 100).toFixed(1)} %`}</dd>
<dt title="Attempt latency, median">Latency p50</dt><dd>${ms(w.p50)}</dd>
<dt title="Attempt latency, 95th percentile">Latency p95</dt><dd>${ms(w.p95)}</dd>
</dl>${w.notifications > 0 ? html`<p class="hint">Not counted: ${w.notifications} notification deliver${w.notifications === 1 ? 'y' : 'ies'}.</p>` : ''}</div>`,
)}
<div class="card"><h3>Outbox</h3>
<dl>
<dt>Pending</dt><dd data-figure="pending">${data.pending.count}</dd>
<dt>Oldest pending</dt><dd>${data.pending.oldest === null ? '–' : time(data.pending.oldest, now)}</dd>
<dt>Open circuits</dt><dd>${breakers.length === 0 ? 'none' : breakers.map((b) => html`<span class="badge failed">${b.destination} ${b.state}</span> `)}</dd>
</dl></div>
</div>
</section>
<section aria-labelledby="h-chart">
<h2 id="h-chart">Outcomes over the last 24 hours (5-minute buckets)</h2>
${
  data.empty
    ? html`<p class="empty" id="chart-empty">No data yet: no delivery in the last 24 hours. The chart appears with the first one.</p>`
    : html`<div id="chart" class="chart" data-chart="${JSON.stringify(data.chart)}" role="img" aria-label="Stacked chart of delivered and failed deliveries per 5 minutes over the last 24 hours"></div>`
}
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

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DELIVERY_ID_SHAPE, isTestRequest } from '../../delivery/index.js';
import type { Hook } from '../../hook/index.js';
import { lintHook } from '../../hook/index.js';
import { lastReceipts } from '../../receipts/index.js';
import {
  DELIVERY_STATUSES,
  type DeliveryQuery,
  type DeliveryStatus,
  HOOK_BUCKET_MS,
} from '../../store/index.js';
import { type Html, html, seg } from '../html.js';
import { copyable, page, statusBadge, time } from '../layout.js';
import type { PageDeps } from '../page-deps.js';
import { formOf, isHtmx, queryOf, sendHtml, sessionOf } from '../respond.js';
import { sendTestEvent } from '../test-event.js';
import { hookCode, hookFacts } from './hook-facts.js';
import { hookLabel } from './live.js';

const LOG_PAGE = 25;
/** Deliveries whose attempts make the latency chart: the newest this many. */
const LATENCY_SAMPLE = 30;

function idOf(req: FastifyRequest): string {
  return (req.params as { id: string }).id;
}

/** A hook's page: every field, warnings, a test event, its chart, the signing secret and the delivery log. */
export function hookViewPages(app: FastifyInstance, deps: PageDeps): void {
  const { root, hooks, pipeline } = deps;

  app.get('/hooks/:id', async (req, reply) => {
    const { ctx } = sessionOf(req);
    const hook = await hooks.get(ctx.user, idOf(req));
    const q = queryOf(req);
    const log = await logSection(deps, hook, q);
    if (isHtmx(req) && q.part === 'log') return sendHtml(reply, log);
    const self = `${root}/hooks/${seg(hook.Id)}`;
    const body = html`
${hookFacts(hook, {
  state: deps.hookStateView?.(hook) ?? hook.State,
  pace: paceOf(deps, hook),
  verified: deps.hookStateView?.verification?.(hook),
  warnings: lintHook(hook).warnings.length,
})}
${hookCode(hook, hook.Filter === undefined ? undefined : deps.engine.code.lastFilterError(hook.Id))}
${warningsOf(hook)}
<div class="actions"><a class="button" href="${self}/edit">Edit</a>
<button type="button" class="primary" hx-post="${self}/test" hx-target="#test-result">Send a test event</button>
<form method="post" action="${self}/delete" class="inline" data-confirm="Delete this hook and its delivery log? This cannot be undone.">
<input type="hidden" name="_csrf" value="${ctx.csrf}"><button type="submit" class="danger">Delete</button></form></div>
<div id="test-result" role="status" aria-live="polite"></div>
${await chartSection(deps, hook)}
<section aria-labelledby="h-secret"><h2 id="h-secret">Signing secret</h2>
<div id="secret"><button type="button" hx-post="${self}/secret" hx-target="#secret">Reveal secret</button></div>
</section>
<section aria-labelledby="h-log"><h2 id="h-log">Delivery log</h2>
<form class="filters" method="get" action="${self}" role="search" aria-label="Filter the delivery log">
<label for="status">Status</label> <select id="status" name="status">
${['', ...DELIVERY_STATUSES].map((s) => html`<option value="${s}"${q.status === s ? html` selected` : ''}>${s || 'any'}</option>`)}
</select>
<label for="path">Path starts with</label> <input id="path" name="path" type="search" size="14" value="${q.path ?? ''}" placeholder="/items/4">
<label for="receiver">Receiver status</label> <input id="receiver" name="receiver" size="9" value="${q.receiver ?? ''}" placeholder="5xx or 404">
<label for="since">From (UTC)</label> <input id="since" name="since" type="datetime-local" value="${q.since ?? ''}">
<label for="until">To (UTC)</label> <input id="until" name="until" type="datetime-local" value="${q.until ?? ''}">
<button type="submit">Apply</button>
</form>
${log}
<form class="bulk" hx-post="${self}/redeliver/count" hx-target="#bulk-result">
<label for="bulk-status">Redeliver every delivery that is</label> <select id="bulk-status" name="status"><option value="failed">failed</option><option value="succeeded">succeeded</option></select>
<button type="submit">Count them…</button>
</form>
<div id="bulk-result" role="status" aria-live="polite"></div>
</section>`;
    return sendHtml(reply, page(ctx, `Hook ${hookLabel(hook)}`, 'hooks', body));
  });

  app.post('/hooks/:id/test', async (req, reply) => {
    const { ctx } = sessionOf(req);
    const hook = await hooks.get(ctx.user, idOf(req));
    const sent = await sendTestEvent({ engine: deps.engine, pipeline }, hook, deps.reportBase(req));
    req.log.info({ hookId: hook.Id }, 'console: test event sent');
    return sendHtml(
      reply,
      html`<p class="ok">Test event sent as <code>${sent.method} ${sent.path}</code>${sent.statusCode !== undefined ? html` [${sent.statusCode}]` : ''}: it is in the delivery log below, marked <span class="badge test">test</span>, and its callback carries <code>hookd-test: true</code>${hook.CallbackContent === undefined ? html` and <code>"test": true</code>` : ''}.</p>`,
    );
  });

  app.post('/hooks/:id/secret', async (req, reply) => {
    const { ctx } = sessionOf(req);
    const hook = await hooks.get(ctx.user, idOf(req));
    const secret = await pipeline.secretFor(hook.Id, hook.Persist);
    return sendHtml(reply, secretView(root, ctx.csrf, hook.Id, secret));
  });

  app.post('/hooks/:id/secret/rotate', async (req, reply) => {
    const { ctx } = sessionOf(req);
    const hook = await hooks.get(ctx.user, idOf(req));
    const r = await pipeline.rotateSecret(hook.Id, hook.Persist);
    return sendHtml(
      reply,
      html`${secretView(root, ctx.csrf, hook.Id, r.secret)}<p role="status">Rotated. The previous secret keeps signing beside it until ${time(r.previousValidUntil)}.</p>`,
    );
  });

  app.post('/hooks/:id/redeliver/count', async (req, reply) => {
    const { ctx } = sessionOf(req);
    const hook = await hooks.get(ctx.user, idOf(req));
    const status = formOf(req).status === 'succeeded' ? 'succeeded' : 'failed';
    let n = 0;
    const query: DeliveryQuery = { status, limit: 1000 };
    for (;;) {
      const pg = await pipeline.list(hook.Id, query);
      n += pg.items.length;
      if (pg.next === undefined) break;
      query.after = pg.next;
    }
    if (n === 0) return sendHtml(reply, html`<p>No ${status} deliveries to redeliver.</p>`);
    return sendHtml(
      reply,
      html`<form hx-post="${root}/hooks/${seg(hook.Id)}/redeliver" hx-target="#bulk-result">
<input type="hidden" name="status" value="${status}">
<p>This queues <strong data-count="${n}">${n}</strong> ${status} deliver${n === 1 ? 'y' : 'ies'} again. <button type="submit" class="primary">Redeliver ${n}</button></p></form>`,
    );
  });

  app.post('/hooks/:id/redeliver', async (req, reply) => {
    const { ctx } = sessionOf(req);
    const hook = await hooks.get(ctx.user, idOf(req));
    const status = formOf(req).status === 'succeeded' ? 'succeeded' : 'failed';
    const { queued } = await pipeline.redeliverBulk(hook.Id, { status });
    return sendHtml(reply, html`<p>${queued} deliver${queued === 1 ? 'y' : 'ies'} queued again.</p>`);
  });
}

/** The concurrency limit the hook's receiver sets now (src/pace/). */
function paceOf(deps: PageDeps, hook: Hook): Html | string {
  const receiver = deps.pipeline.pace.receiverOf(hook.Callback);
  if (receiver === undefined) return '';
  const { limit, max, note } = deps.pipeline.pace.current(receiver);
  // Only a limit the receiver's answers lowered is a warning; the start-up ramp is not.
  const why =
    note === undefined
      ? ''
      : note.state === 'ramping'
        ? html` <span class="pace-note hint">(ramping up)</span>`
        : html` <span class="pace-note warn">lowered after ${note.after}</span>`;
  return html`<dt>Receiver pace</dt><dd class="receiver-pace">at most <span class="pace-limit">${limit}</span> of ${max} attempts at once${why}</dd>`;
}

/** The lint's warnings about the saved hook (the API's `Warnings`), so they do not vanish on save. */
function warningsOf(hook: Hook): Html {
  const w = lintHook(hook).warnings;
  if (w.length === 0) return html``;
  return html`<div class="notice warning-box" role="note"><p><strong>${w.length} warning${w.length === 1 ? '' : 's'}</strong> (the hook works, but check):</p>
<ul>${w.map((x) => html`<li><code>${x.field}</code>: ${x.message}</li>`)}</ul></div>`;
}

/** Outcomes per hour over 24 hours (the rollups) and the latency of the newest attempts, for uPlot. */
async function chartSection(deps: PageDeps, hook: Hook): Promise<Html> {
  const now = Date.now();
  const since = now - (now % HOOK_BUCKET_MS) - 23 * HOOK_BUCKET_MS;
  const series = (await deps.aggregates.hookSeries([hook.Id], since)).get(hook.Id) ?? [];
  const by = new Map(series.map((b) => [b.bucket, b]));
  const x: number[] = [];
  const ok: number[] = [];
  const failed: number[] = [];
  for (let b = since; b <= now; b += HOOK_BUCKET_MS) {
    x.push(b / 1000);
    ok.push(by.get(b)?.succeeded ?? 0);
    failed.push(by.get(b)?.failed ?? 0);
  }
  const recent = await deps.pipeline.list(hook.Id, { limit: LATENCY_SAMPLE });
  const details = await Promise.all(recent.items.map((d) => deps.pipeline.getWithAttempts(d.id)));
  const points = details
    .flatMap((d) => d?.attempts ?? [])
    .sort((a, b) => a.time - b.time)
    .map((a) => [
      a.time / 1000,
      Math.round(a.latencyMs * 10) / 10,
      a.statusCode !== null && a.statusCode < 300 ? 1 : 0,
    ]);
  if (points.length === 0 && series.length === 0)
    return html`<section aria-labelledby="h-chart"><h2 id="h-chart">Outcomes and latency</h2>
<p class="empty" id="hook-chart-empty">No data yet: this hook has not fired in the last 24 hours. Use <em>Send a test event</em> to see it work.</p></section>`;
  const data = {
    outcomes: { x, ok, failed },
    latency: { t: points.map((p) => p[0]), ms: points.map((p) => p[1]), ok: points.map((p) => p[2]) },
  };
  return html`<section aria-labelledby="h-chart"><h2 id="h-chart">Outcomes and latency</h2>
<div class="hook-charts" id="hook-chart" data-chart="${JSON.stringify(data)}">
<div id="hook-outcomes" class="chart small" role="img" aria-label="Delivered and failed deliveries of this hook per hour over the last 24 hours"></div>
<div id="hook-latency" class="chart small" role="img" aria-label="Latency of the newest ${points.length} attempts, in milliseconds"></div>
</div></section>`;
}

function secretView(root: string, csrf: string, hookId: string, secret: string): Html {
  return html`<p>${copyable('secret-value', secret, true)}</p>
<form hx-post="${root}/hooks/${seg(hookId)}/secret/rotate" hx-target="#secret" hx-confirm="Rotate the signing secret? Receivers must accept the new one within the grace period.">
<input type="hidden" name="_csrf" value="${csrf}"><button type="submit">Rotate secret</button></form>`;
}

/** `5xx` → [500, 599], `404` → [404, 404]; anything else: no filter. */
export function receiverRange(text: string | undefined): [number, number] | undefined {
  const t = (text ?? '').trim().toLowerCase();
  const cls = /^([1-5])xx$/.exec(t);
  if (cls) return [Number(cls[1]) * 100, Number(cls[1]) * 100 + 99];
  if (/^[1-5]\d\d$/.test(t)) return [Number(t), Number(t)];
  return undefined;
}

/** A hook's delivery log: filters from the query, newest first, paged; refreshed while on its first page. */
async function logSection(deps: PageDeps, hook: Hook, q: Record<string, string>): Promise<Html> {
  const { root } = deps;
  const query: DeliveryQuery = { limit: LOG_PAGE };
  if ((DELIVERY_STATUSES as readonly string[]).includes(q.status ?? ''))
    query.status = q.status as DeliveryStatus;
  const since = q.since ? Date.parse(`${q.since}Z`) : Number.NaN;
  if (!Number.isNaN(since)) query.since = since;
  const until = q.until ? Date.parse(`${q.until}Z`) : Number.NaN;
  if (!Number.isNaN(until)) query.until = until;
  if (q.path?.trim()) query.pathPrefix = q.path.trim();
  const rs = receiverRange(q.receiver);
  if (rs) query.receiverStatus = rs;
  if (q.after && DELIVERY_ID_SHAPE.test(q.after)) query.after = q.after;
  const pg = await deps.pipeline.list(hook.Id, query);
  const receipts = await lastReceipts(deps.pipeline, pg.items);
  const params = new URLSearchParams();
  for (const k of ['status', 'since', 'until', 'path', 'receiver']) if (q[k]) params.set(k, q[k]!);
  const self = `${root}/hooks/${seg(hook.Id)}?${params.toString()}`;
  const refresh = query.after === undefined;
  const now = Date.now();
  return html`<div id="log"${refresh ? html` hx-get="${self}${params.size ? '&' : ''}part=log" hx-trigger="every 2s" hx-swap="outerHTML"` : ''}>
${
  pg.items.length === 0
    ? html`<p class="empty">${params.size ? 'No deliveries match these filters.' : html`No deliveries yet. They appear here when a request through hookd matches this hook, or when you <em>send a test event</em>.`}</p>`
    : html`<div class="table-wrap"><table class="log">
<caption class="visually-hidden">Deliveries of this hook, newest first</caption>
<thead><tr><th scope="col">Created</th><th scope="col">Request [upstream status]</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Delivery</th></tr></thead>
<tbody>
${pg.items.map(
  (
    d,
  ) => html`<tr><td><a href="${root}/deliveries/${seg(d.id)}" title="Delivery ${d.id}">${time(d.created, now)}</a></td>
<td><code>${d.trigger.method} ${d.trigger.path}</code>${d.trigger.statusCode !== undefined ? html` [${d.trigger.statusCode}]` : ''}${isTestRequest(d.request.headers) ? html` <span class="badge test">test</span>` : ''}</td>
<td>${statusBadge(d.status, d.lastStatusCode)}${receipts.has(d.id) ? html` <span class="receipt">${receipts.get(d.id)!}</span>` : ''}${d.roundStart > 0 ? html` <span class="badge manual">redelivered</span>` : ''}${heldBehindOf(d) ? html` <a class="badge held" href="${root}/deliveries/${seg(heldBehindOf(d)!)}" title="held behind ${heldBehindOf(d)!}">held</a>` : ''}</td><td>${d.attempts}</td>
<td><a href="${root}/deliveries/${seg(d.id)}">${d.id}</a></td></tr>`,
)}
</tbody></table></div>`
}
<p class="paging">${query.after ? html`<a href="${self}">Newest</a> ` : ''}${pg.next ? html`<a href="${self}${params.size ? '&' : ''}after=${pg.next}">Older</a>` : ''}</p>
</div>`;
}

/** The delivery this live one waits behind in its ordering key (the API's `HeldBehind`). */
function heldBehindOf(d: object): string | undefined {
  const v = (d as { heldBehind?: unknown }).heldBehind;
  return typeof v === 'string' ? v : undefined;
}

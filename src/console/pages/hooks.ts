import type { FastifyInstance } from 'fastify';
import { HOOK_BUCKET_MS, type OutcomeBucket } from '../../store/index.js';
import { type Html, html, seg } from '../html.js';
import { page, statusBadge, time } from '../layout.js';
import type { PageDeps } from '../page-deps.js';
import { queryOf, sendHtml, sessionOf } from '../respond.js';
import { hookEditorPages } from './hook-editor.js';
import { hookViewPages } from './hook-page.js';
import { hookLabel } from './live.js';

/** The hook list, the editor (hook-editor.ts) and a hook's page (hook-page.ts). */
export function hookPages(app: FastifyInstance, deps: PageDeps): void {
  const { root, hooks } = deps;

  app.get('/hooks', async (req, reply) => {
    const { ctx } = sessionOf(req);
    const q = queryOf(req);
    const text = (q.q ?? '').trim().toLowerCase();
    const state = q.state === 'active' || q.state === 'disabled' ? q.state : '';
    const all = (await hooks.list(ctx.user)).items;
    const shown = all.filter(
      (h) =>
        (state === '' || h.State === state) &&
        (text === '' ||
          hookLabel(h).toLowerCase().includes(text) ||
          h.PathPattern.toLowerCase().includes(text) ||
          h.Callback.toLowerCase().includes(text) ||
          h.Id.toLowerCase().includes(text)),
    );
    const ids = shown.map((h) => h.Id);
    const now = Date.now();
    const since = now - (now % HOOK_BUCKET_MS) - 23 * HOOK_BUCKET_MS;
    const [series, last] = await Promise.all([
      deps.aggregates.hookSeries(ids, since),
      deps.aggregates.lastDeliveries(ids),
    ]);
    const body = html`
<form class="filters" method="get" action="${root}/hooks" role="search">
<label for="q">Filter</label> <input id="q" name="q" type="search" value="${q.q ?? ''}" placeholder="name, pattern, callback or Id">
<label for="state">State</label> <select id="state" name="state">
${['', 'active', 'disabled'].map((s) => html`<option value="${s}"${s === state ? html` selected` : ''}>${s || 'any'}</option>`)}
</select>
<button type="submit">Apply</button>
<a class="button primary" href="${root}/hooks/new">New hook</a>
</form>
${
  all.length === 0
    ? html`<div class="empty"><p><strong>No hooks yet.</strong> A hook says which requests through hookd (path pattern, methods, response statuses) should call which URL. <a href="${root}/hooks/new">Create your first hook</a>.</p></div>`
    : html`<p>${shown.length} of ${all.length} hook${all.length === 1 ? '' : 's'}.</p>
<div class="table-wrap"><table class="hooks">
<caption class="visually-hidden">Your hooks</caption>
<thead><tr><th scope="col">Hook</th><th scope="col">Methods</th><th scope="col">Type</th><th scope="col">Callback to</th><th scope="col">State</th><th scope="col">Last delivery</th><th scope="col">Last 24 h</th></tr></thead>
<tbody>
${shown.map((h) => {
  const l = last.get(h.Id);
  const label = hookLabel(h);
  return html`<tr>
<td><a href="${root}/hooks/${seg(h.Id)}">${label}</a>${label !== h.PathPattern ? html`<br><code class="hint">${h.PathPattern}</code>` : ''}</td>
<td>${h.Methods.join(' ')}</td>
<td>${h.Type === 0 ? 'Before' : 'After'}</td>
<td>${targetOf(h.Callback)}</td>
<td>${statusBadge(deps.hookStateView?.(h) ?? h.State)}</td>
<td class="last">${l ? html`${statusBadge(l.status, l.lastStatusCode)} ${time(l.created, now)}` : html`<span class="hint">never</span>`}</td>
<td>${sparkline(series.get(h.Id) ?? [], since)}</td>
</tr>`;
})}
</tbody></table></div>
${shown.length === 0 ? html`<p class="empty">No hook matches this filter.</p>` : ''}`
}`;
    return sendHtml(reply, page(ctx, 'Hooks', 'hooks', body));
  });

  hookEditorPages(app, deps);
  hookViewPages(app, deps);
}

/**
 * Scheme and host (`amqp://127.0.0.1:5672`): four broker hooks on one host differ by scheme and
 * port, and the scheme says which transport sends. No user name or password (URL.host has none).
 */
export function targetOf(url: string): string {
  try {
    const u = new URL(url);
    return u.host === '' ? u.protocol : `${u.protocol}//${u.host}`;
  } catch {
    return url;
  }
}

/**
 * A 24-bar sparkline, one bar per hour, as inline SVG (server-drawn: no script, no inline
 * style). Every hour has its slot on a baseline, so one busy hour reads as one hour of 24, not
 * as "one bar".
 */
export function sparkline(buckets: readonly OutcomeBucket[], since: number): Html {
  const ok = new Array<number>(24).fill(0);
  const bad = new Array<number>(24).fill(0);
  for (const b of buckets) {
    const i = Math.floor((b.bucket - since) / HOOK_BUCKET_MS);
    if (i >= 0 && i < 24) {
      ok[i]! += b.succeeded;
      bad[i]! += b.failed;
    }
  }
  const max = Math.max(1, ...ok.map((v, i) => v + bad[i]!));
  const total = ok.reduce((a, b) => a + b, 0);
  const failed = bad.reduce((a, b) => a + b, 0);
  const bars = ok.map((v, i) => {
    const n = v + bad[i]!;
    // Non-empty hours are at least 3 px tall, so a single delivery is visible beside a busy hour.
    const h = n === 0 ? 0 : Math.max(3, (n / max) * 19);
    const hBad = n === 0 ? 0 : (bad[i]! / n) * h;
    return html`<rect class="slot" x="${i * 4}" y="19" width="3" height="1"></rect>${
      n > 0
        ? html`<rect class="ok" x="${i * 4}" y="${19 - h}" width="3" height="${h - hBad}"></rect><rect class="bad" x="${i * 4}" y="${19 - hBad}" width="3" height="${hBad}"></rect>`
        : ''
    }`;
  });
  const text = `${total} delivered, ${failed} failed in the last 24 hours (one bar per hour)`;
  return html`<svg class="spark" viewBox="0 0 96 20" width="96" height="20" role="img" aria-label="${text}"><title>${text}</title>${bars}</svg>`;
}

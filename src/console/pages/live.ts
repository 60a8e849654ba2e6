import type { FastifyInstance } from 'fastify';
import type { Hook } from '../../hook/index.js';
import { html } from '../html.js';
import { page } from '../layout.js';
import type { PageDeps } from '../page-deps.js';
import { sendHtml, sessionOf } from '../respond.js';

/** A hook as people tell it apart: its Name when it has one, else its pattern. */
export function hookLabel(h: Hook): string {
  const name = (h as Hook & { Name?: unknown }).Name;
  return typeof name === 'string' && name.trim() !== '' ? name : h.PathPattern;
}

/**
 * The live tail as a page: console.js opens the tail WebSocket, signed in by the session cookie,
 * and keeps one row per delivery, newest first, updated in place as its attempts come in.
 */
export function livePage(app: FastifyInstance, deps: PageDeps): void {
  // The tail WebSocket, under the console's path so that the session cookie (scoped to that
  // path, never sent to the upstream) goes with the upgrade.
  const tailPath = `${deps.root}/tail`;
  app.get('/live', async (req, reply) => {
    const { ctx } = sessionOf(req);
    const mine = (await deps.hooks.list(ctx.user)).items;
    const labels = Object.fromEntries(mine.map((h) => [h.Id, hookLabel(h)]));
    const body = html`
<form id="live-filters" class="filters" data-tail="${tailPath}" data-root="${deps.root}" data-hooks="${JSON.stringify(labels)}">
<label for="live-hook">Hook</label> <select id="live-hook" name="hook"><option value="">any</option>
${mine.map((h) => html`<option value="${h.Id}">${hookLabel(h)} (${h.Id})</option>`)}</select>
<label for="live-status">Status</label> <select id="live-status" name="status"><option value="">any</option>
${['2xx', '3xx', '4xx', '5xx', 'failed'].map((s) => html`<option value="${s}">${s}</option>`)}</select>
<button type="button" id="live-pause" aria-pressed="false">Pause</button>
<span id="live-state" role="status">connecting…</span>
</form>
<p class="hint">One row per delivery, newest first; a row changes in place as its attempts come in. The request's method, path and the upstream's status are on the left, the receiver's answer on the right.</p>
<div class="table-wrap"><table class="live">
<caption class="visually-hidden">Live deliveries, newest first</caption>
<thead><tr><th scope="col">Fired</th><th scope="col">Hook</th><th scope="col">Request [upstream status]</th><th scope="col">Receiver</th><th scope="col">Attempts</th><th scope="col">Delivery</th></tr></thead>
<tbody id="live-events"></tbody></table></div>
<div id="live-empty" class="empty">
<p><strong>Nothing has fired since this page opened.</strong></p>
<p>Deliveries show here the moment a request through hookd fires one of your hooks${mine.length === 0 ? '' : ', or when you send a test event from a hook’s page'}.${mine.length === 0 ? html` You have no hooks yet: <a href="${deps.root}/hooks/new">create one</a>.` : ''}</p>
</div>`;
    return sendHtml(reply, page(ctx, 'Live', 'live', body));
  });
}

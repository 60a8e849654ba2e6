import type { FastifyInstance } from 'fastify';
import { html } from '../html.js';
import { page } from '../layout.js';
import type { PageDeps } from '../page-deps.js';
import { sendHtml, sessionOf } from '../respond.js';

/** The live tail as a page: console.js opens the tail WebSocket, signed in by the session cookie. */
export function livePage(app: FastifyInstance, deps: PageDeps): void {
  // The tail WebSocket, under the console's path so that the session cookie (scoped to that
  // path, never sent to the upstream) goes with the upgrade.
  const tailPath = `${deps.root}/tail`;
  app.get('/live', async (req, reply) => {
    const { ctx } = sessionOf(req);
    const mine = (await deps.hooks.list(ctx.user)).items;
    const body = html`
<form id="live-filters" class="filters" data-tail="${tailPath}" data-root="${deps.root}">
<label for="live-hook">Hook</label> <select id="live-hook" name="hook"><option value="">any</option>
${mine.map((h) => html`<option value="${h.Id}">${h.PathPattern} (${h.Id})</option>`)}</select>
<label for="live-status">Status</label> <select id="live-status" name="status"><option value="">any</option>
${['2xx', '3xx', '4xx', '5xx', 'failed'].map((s) => html`<option value="${s}">${s}</option>`)}</select>
<button type="button" id="live-pause" aria-pressed="false">Pause</button>
<span id="live-state" role="status">connecting…</span>
</form>
<div class="table-wrap"><table class="live">
<caption class="visually-hidden">Live events, newest first</caption>
<thead><tr><th scope="col">Time</th><th scope="col">Event</th><th scope="col">Trigger</th><th scope="col">Outcome</th><th scope="col">Delivery</th></tr></thead>
<tbody id="live-events"></tbody></table></div>`;
    return sendHtml(reply, page(ctx, 'Live', 'live', body));
  });
}

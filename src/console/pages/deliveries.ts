import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DELIVERY_ID_SHAPE, isTestRequest, TEST_HEADER } from '../../delivery/index.js';
import { HookdError } from '../../errors/index.js';
import type { AttemptRecord, DeliveryRecord } from '../../store/index.js';
import { withoutPassword } from '../../util/index.js';
import { type Html, html, seg } from '../html.js';
import { page, statusBadge, time } from '../layout.js';
import type { PageDeps } from '../page-deps.js';
import { isHtmx, sendHtml, sessionOf } from '../respond.js';

/** A delivery's page: trigger, request (the hook's headers hidden), attempts; redeliver. */
export function deliveryPages(app: FastifyInstance, deps: PageDeps): void {
  const { root, hooks, pipeline } = deps;

  /** The delivery, if its hook is the user's; otherwise it does not exist for them (404). */
  const owned = async (req: FastifyRequest) => {
    const { ctx } = sessionOf(req);
    const id = (req.params as { id: string }).id;
    const notFound = new HookdError('NOT_FOUND', `no delivery with Id "${id.slice(0, 64)}"`);
    if (!DELIVERY_ID_SHAPE.test(id)) throw notFound;
    const found = await pipeline.getWithAttempts(id);
    if (!found) throw notFound;
    const hook = await hooks.find(found.delivery.hookId);
    if (!hook || hook.Owner !== ctx.user) throw notFound;
    return { ...found, hook };
  };

  app.get('/deliveries/:id', async (req, reply) => {
    const { ctx } = sessionOf(req);
    const { delivery: d, attempts, hook } = await owned(req);
    if (isHtmx(req)) return sendHtml(reply, attemptsSection(d, attempts));
    const body = html`
<section aria-labelledby="h-trigger"><h2 id="h-trigger">Trigger</h2>
<dl class="facts">
<dt>Request</dt><dd><code>${d.trigger.method} ${d.trigger.path}</code>${isTestRequest(d.request.headers) ? html` <span class="badge test">test event</span>` : ''}</dd>
<dt>Status served</dt><dd>${d.trigger.statusCode ?? '– (before completion)'}</dd>
<dt>Requested by</dt><dd>${d.trigger.user ?? 'anonymous'}</dd>
<dt>Hook</dt><dd><a href="${root}/hooks/${seg(hook.Id)}">${hook.PathPattern}</a> (<code>${hook.Id}</code>)</dd>
<dt>Created</dt><dd>${time(d.created)}</dd>
${heldFacts(root, d)}
</dl></section>
<section aria-labelledby="h-request"><h2 id="h-request">Request sent</h2>
<p>${/^https?:/i.test(d.request.url) ? html`<strong>${d.request.method}</strong> ` : ''}<code>${withoutPassword(d.request.url)}</code></p>
<p class="hint">Content type: ${contentType(d.request.headers) ?? '–'}.${hiddenHeaders(d.request.headers)}</p>
${d.request.body !== undefined ? html`<pre class="json" tabindex="0" aria-label="Request body">${d.request.body}</pre>` : html`<p>No body.</p>`}
</section>
<section aria-labelledby="h-attempts"><h2 id="h-attempts">Attempts</h2>
<form hx-post="${root}/deliveries/${seg(d.id)}/redeliver" hx-target="#redeliver-result">
<button type="submit" class="primary">Redeliver</button></form>
<div id="redeliver-result" role="status" aria-live="polite"></div>
${attemptsSection(d, attempts, `${root}/deliveries/${seg(d.id)}`)}
</section>`;
    return sendHtml(reply, page(ctx, `Delivery ${d.id}`, 'none', body));
  });

  app.post('/deliveries/:id/redeliver', async (req, reply) => {
    const { delivery } = await owned(req);
    // While the destination's circuit is open an attempt is not sent, only recorded as failed
    // (it would use up an attempt and show as "failed 0 ms"): say so instead of queueing it.
    const open = openCircuitFor(deps, delivery.request.url);
    if (open)
      return sendHtml(
        reply,
        html`<p class="error" role="alert">Not queued: the circuit for ${open} is open (its recent attempts failed in a row). hookd lets one probe through when the cool-down ends, and deliveries flow again once it succeeds; a redelivery now would only be recorded as failed without being sent. Try again in a minute.</p>`,
      );
    const queued = await pipeline.redeliver(delivery.id);
    if (!queued) throw new HookdError('NOT_FOUND', 'the delivery is gone');
    return sendHtml(reply, html`<p>Queued again; the next attempt appears below.</p>`);
  });
}

/** The attempts timeline; polled while the page is open, so new attempts appear by themselves. */
function attemptsSection(d: DeliveryRecord, attempts: readonly AttemptRecord[], self?: string): Html {
  return html`<div id="attempts"${self ? html` hx-get="${self}" hx-trigger="every 2s" hx-swap="outerHTML"` : ''}>
<p>Status: ${statusBadge(d.status, d.lastStatusCode)} · ${d.attempts} attempt${d.attempts === 1 ? '' : 's'}${d.nextAttempt !== null ? html` · next at ${time(d.nextAttempt)}` : ''}</p>
<ol class="timeline">
${attempts.map(
  (a) => html`<li class="attempt" data-attempt="${a.attempt}">
<p><strong>Attempt ${a.attempt}</strong>${d.roundStart > 0 && a.attempt === d.roundStart + 1 ? html` <span class="badge manual" title="started by a redelivery, not by the retry schedule">manual redelivery</span>` : a.attempt > 1 && (d.roundStart === 0 || a.attempt > d.roundStart + 1) ? html` <span class="badge retry">retry</span>` : ''} · ${time(a.time)} · ${a.statusCode === null ? statusBadge(a.error === null && a.responseBody !== null ? 'succeeded' : 'failed', null) : statusBadge(a.statusCode >= 200 && a.statusCode < 300 ? 'succeeded' : 'failed', a.statusCode)} · ${Math.round(a.latencyMs)} ms</p>
${a.error ? html`<p class="error">${a.error}</p>` : ''}
${a.responseBody ? html`<pre class="json" tabindex="0" aria-label="Response excerpt of attempt ${a.attempt}">${a.responseBody}</pre>` : ''}
</li>`,
)}
</ol></div>`;
}

/**
 * How many of the hook's own headers are hidden. Content-Type is shown above and the signing
 * headers are hookd's, so neither is counted.
 */
function hiddenHeaders(headers: Record<string, string>): string {
  const n = Object.keys(headers).filter((k) => {
    const lower = k.toLowerCase();
    return lower !== 'content-type' && lower !== TEST_HEADER;
  }).length;
  if (n === 0) return ' The hook sets no headers of its own.';
  return ` ${n} header${n === 1 ? '' : 's'} of the hook ${n === 1 ? 'is' : 'are'} not shown: they may hold credentials.`;
}

/** The open circuit (endpoint or host) a callback URL would meet now, if any. */
export function openCircuitFor(deps: Pick<PageDeps, 'pipeline'>, url: string): string | undefined {
  let origin = url;
  try {
    origin = new URL(url).origin;
  } catch {
    // A stored callback URL always parses; the endpoint comparison alone is left otherwise.
  }
  for (const b of deps.pipeline.breakers())
    if (b.state === 'open' && (b.destination === url || b.destination === origin)) return b.destination;
  return undefined;
}

function contentType(headers: Record<string, string>): string | undefined {
  for (const k in headers) if (k.toLowerCase() === 'content-type') return headers[k];
  return undefined;
}

/** What holds a waiting delivery back, as the API's `HeldBehind` and `HeldBy` (live deliveries only). */
function heldFacts(root: string, d: DeliveryRecord): Html | string {
  const live = d as DeliveryRecord & { heldBehind?: string; heldBy?: string };
  const behind =
    typeof live.heldBehind === 'string'
      ? html`<dt>Held behind</dt><dd><a class="held-behind" href="${root}/deliveries/${seg(live.heldBehind)}"><code>${live.heldBehind}</code></a></dd>`
      : '';
  const by =
    d.status === 'pending' && typeof live.heldBy === 'string'
      ? html`<dt>Held by</dt><dd class="held-by">${live.heldBy}</dd>`
      : '';
  return behind === '' && by === '' ? '' : html`${behind}${by}`;
}

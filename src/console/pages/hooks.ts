import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DELIVERY_ID_SHAPE } from '../../delivery/delivery-id.js';
import { type FieldError, HookdError } from '../../errors/catalog.js';
import type { Hook } from '../../hook/hook.js';
import { lintHook } from '../../hook/lint-hook.js';
import { HOOK_BUCKET_MS, type OutcomeBucket } from '../../store/delivery-aggregates.js';
import { DELIVERY_STATUSES, type DeliveryQuery, type DeliveryStatus } from '../../store/delivery-store.js';
import {
  EMPTY_FORM,
  errorSlot,
  errorsByField,
  FORM_FIELDS,
  formToHook,
  hookForm,
  hookToForm,
  jsonView,
  summary,
} from '../hook-form.js';
import { type Html, html, seg } from '../html.js';
import { page, statusBadge, time } from '../layout.js';
import type { PageDeps } from '../page-deps.js';
import { formOf, isHtmx, queryOf, sendHtml, sessionOf } from '../respond.js';

const LOG_PAGE = 25;

function idOf(req: FastifyRequest): string {
  return (req.params as { id: string }).id;
}

function validationErrors(err: unknown): FieldError[] | undefined {
  if (err instanceof HookdError && err.code === 'VALIDATION_FAILED')
    return err.errors ?? [{ field: '(body)', message: err.message }];
  return undefined;
}

/** The hook list, the editor (create, replace, delete, live validation, dry run) and a hook's page. */
export function hookPages(app: FastifyInstance, deps: PageDeps): void {
  const { root, hooks, pipeline } = deps;

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
          h.PathPattern.toLowerCase().includes(text) ||
          h.Callback.toLowerCase().includes(text) ||
          h.Id.toLowerCase().includes(text) ||
          (h.Name ?? '').includes(text)),
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
<label for="q">Filter</label> <input id="q" name="q" type="search" value="${q.q ?? ''}" placeholder="pattern, callback or Id">
<label for="state">State</label> <select id="state" name="state">
${['', 'active', 'disabled'].map((s) => html`<option value="${s}"${s === state ? html` selected` : ''}>${s || 'any'}</option>`)}
</select>
<button type="submit">Apply</button>
<a class="button primary" href="${root}/hooks/new">New hook</a>
</form>
<p>${shown.length} of ${all.length} hook${all.length === 1 ? '' : 's'}.</p>
<div class="table-wrap"><table class="hooks">
<caption class="visually-hidden">Your hooks</caption>
<thead><tr><th scope="col">Pattern</th><th scope="col">Methods</th><th scope="col">Type</th><th scope="col">Callback host</th><th scope="col">State</th><th scope="col">Last delivery</th><th scope="col">24 h</th></tr></thead>
<tbody>
${shown.map((h) => {
  const l = last.get(h.Id);
  return html`<tr>
<td><a href="${root}/hooks/${seg(h.Id)}">${h.PathPattern}</a>${h.Name === undefined ? '' : html` <small class="name">${h.Name}</small>`}</td>
<td>${h.Methods.join(' ')}</td>
<td>${h.Type === 0 ? 'Before' : 'After'}</td>
<td>${hostOf(h.Callback)}</td>
<td>${statusBadge(h.State)}</td>
<td>${l ? statusBadge(l.status, l.lastStatusCode) : '–'}</td>
<td>${sparkline(series.get(h.Id) ?? [], since)}</td>
</tr>`;
})}
</tbody></table></div>`;
    return sendHtml(reply, page(ctx, 'Hooks', 'hooks', body));
  });

  const editor = (
    req: FastifyRequest,
    title: string,
    action: string,
    values: Record<string, string>,
    errors: FieldError[],
    submit: string,
    extra: Html = html``,
  ) => {
    const { ctx } = sessionOf(req);
    const byField = errorsByField(errors);
    return page(
      ctx,
      title,
      'hooks',
      html`<div class="editor">
<section aria-labelledby="h-form"><h2 id="h-form">Form</h2>
${hookForm(root, ctx.csrf, action, values, byField, submit)}</section>
<section aria-labelledby="h-json"><h2 id="h-json">JSON</h2>${jsonView(formToHook(values))}</section>
</div>
${dryRunPanel(root, ctx.csrf)}
${extra}`,
    );
  };

  app.get('/hooks/new', async (req, reply) =>
    sendHtml(reply, editor(req, 'New hook', `${root}/hooks`, EMPTY_FORM, [], 'Create hook')),
  );

  app.post('/hooks', async (req, reply) => {
    const { ctx } = sessionOf(req);
    const f = formOf(req);
    try {
      const hook = await hooks.create(ctx.user, formToHook(f));
      req.log.info({ hookId: hook.Id }, 'console: hook created');
      return reply.redirect(`${root}/hooks/${seg(hook.Id)}`, 303);
    } catch (err) {
      const errors = validationErrors(err);
      if (!errors) throw err;
      return sendHtml(reply, editor(req, 'New hook', `${root}/hooks`, f, errors, 'Create hook'), 400);
    }
  });

  // Live validation as the user types: every field's error slot and the JSON view, out of band.
  app.post('/hooks/validate', async (req, reply) => {
    const f = formOf(req);
    const doc = formToHook(f);
    let errors: FieldError[] = [];
    let warnings: FieldError[] = [];
    try {
      // The API's own lint (docs/API.md "Warnings"): what create would accept but likely not mean.
      warnings = lintHook(await hooks.check(doc)).warnings;
    } catch (err) {
      const e = validationErrors(err);
      if (!e) throw err;
      errors = e;
    }
    const byField = errorsByField(errors);
    const warned = errorsByField(warnings);
    return sendHtml(
      reply,
      html`${summary(
        byField,
        warnings.map((w) => `${w.field}: ${w.message}`),
      )}
${FORM_FIELDS.map((k) =>
  errorSlot(k, [...(byField.get(k) ?? []), ...(warned.get(k) ?? []).map((m) => `warning: ${m}`)], true),
)}
${jsonView(doc, true)}`,
    );
  });

  app.post('/hooks/dry-run', async (req, reply) => {
    const { ctx } = sessionOf(req);
    const f = formOf(req);
    const method = (f.Method ?? 'GET').trim().toUpperCase();
    const path = (f.Path ?? '').trim();
    const status = f.StatusCode?.trim() ? Number(f.StatusCode) : undefined;
    if (
      !/^[A-Z]{1,16}$/.test(method) ||
      !path.startsWith('/') ||
      (status !== undefined && !(status >= 100 && status <= 599))
    )
      return sendHtml(
        reply,
        html`<p class="error" role="alert">Give a method (e.g. GET), a path starting with / and, optionally, a status code from 100 to 599.</p>`,
      );
    const i = path.indexOf('?');
    const p = i === -1 ? path : path.slice(0, i);
    const previews = await deps.engine.preview(ctx.user, {
      method,
      path: p,
      uri: () => `${deps.reportBase(req)}${path}`,
      user: (f.User ?? '').trim(),
      ...(status !== undefined && { statusCode: status }),
    });
    if (previews.length === 0)
      return sendHtml(reply, html`<p>No hook of yours fires for ${method} ${path}.</p>`);
    return sendHtml(
      reply,
      html`<p>${previews.length} hook${previews.length === 1 ? '' : 's'} fire${previews.length === 1 ? 's' : ''}:</p>
${previews.map(
  (
    pv,
  ) => html`<article class="preview"><h3><a href="${root}/hooks/${seg(pv.hook.Id)}">${pv.hook.Id}</a> · ${pv.hook.PathPattern}</h3>
<p><strong>${pv.request.method}</strong> <code>${pv.request.url}</code></p>
<pre class="json">${Object.entries(pv.request.headers)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\n')}${pv.request.body !== undefined ? `\n\n${pv.request.body}` : ''}</pre></article>`,
)}`,
    );
  });

  app.get('/hooks/:id', async (req, reply) => {
    const { ctx } = sessionOf(req);
    const hook = await hooks.get(ctx.user, idOf(req));
    const q = queryOf(req);
    const log = await logSection(deps, hook, q);
    if (isHtmx(req) && q.part === 'log') return sendHtml(reply, log);
    const body = html`
<dl class="facts">
<dt>Id</dt><dd><code>${hook.Id}</code></dd>
${hook.Name === undefined ? '' : html`<dt>Name</dt><dd><code>${hook.Name}</code></dd>`}
<dt>Pattern</dt><dd><code>${hook.PathPattern}</code></dd>
<dt>Methods</dt><dd>${hook.Methods.join(' ')}</dd>
<dt>Type</dt><dd>${hook.Type === 0 ? '0 · BeforeCompletion' : '1 · AfterCompletion'}</dd>
<dt>Callback</dt><dd>${hook.CallbackMethod} <code>${hook.Callback}</code></dd>
<dt>State</dt><dd>${statusBadge(hook.State)}</dd>
<dt>Modified</dt><dd>${hook.Modified}</dd>
</dl>
<p class="actions"><a class="button" href="${root}/hooks/${seg(hook.Id)}/edit">Edit</a>
<form method="post" action="${root}/hooks/${seg(hook.Id)}/delete" class="inline" data-confirm="Delete this hook and its delivery log? This cannot be undone.">
<input type="hidden" name="_csrf" value="${ctx.csrf}"><button type="submit" class="danger">Delete</button></form></p>
<section aria-labelledby="h-secret"><h2 id="h-secret">Signing secret</h2>
<div id="secret"><button type="button" hx-post="${root}/hooks/${seg(hook.Id)}/secret" hx-target="#secret">Reveal secret</button></div>
</section>
<section aria-labelledby="h-log"><h2 id="h-log">Delivery log</h2>
<form class="filters" method="get" action="${root}/hooks/${seg(hook.Id)}">
<label for="status">Status</label> <select id="status" name="status">
${['', ...DELIVERY_STATUSES].map((s) => html`<option value="${s}"${q.status === s ? html` selected` : ''}>${s || 'any'}</option>`)}
</select>
<label for="since">From</label> <input id="since" name="since" type="datetime-local" value="${q.since ?? ''}">
<label for="until">To</label> <input id="until" name="until" type="datetime-local" value="${q.until ?? ''}">
<button type="submit">Apply</button>
</form>
${log}
<form class="bulk" hx-post="${root}/hooks/${seg(hook.Id)}/redeliver/count" hx-target="#bulk-result">
<label for="bulk-status">Redeliver every delivery that is</label> <select id="bulk-status" name="status"><option value="failed">failed</option><option value="succeeded">succeeded</option></select>
<button type="submit">Count them…</button>
</form>
<div id="bulk-result" role="status" aria-live="polite"></div>
</section>`;
    return sendHtml(reply, page(ctx, `Hook ${hook.PathPattern}`, 'hooks', body));
  });

  app.get('/hooks/:id/edit', async (req, reply) => {
    const { ctx } = sessionOf(req);
    const hook = await hooks.get(ctx.user, idOf(req));
    return sendHtml(
      reply,
      editor(
        req,
        `Edit hook ${hook.Id}`,
        `${root}/hooks/${seg(hook.Id)}`,
        hookToForm(hook),
        [],
        'Replace hook',
      ),
    );
  });

  app.post('/hooks/:id', async (req, reply) => {
    const { ctx } = sessionOf(req);
    const id = idOf(req);
    const f = formOf(req);
    try {
      const hook = await hooks.replace(ctx.user, id, formToHook(f));
      return reply.redirect(`${root}/hooks/${seg(hook.Id)}`, 303);
    } catch (err) {
      const errors = validationErrors(err);
      if (!errors) throw err;
      return sendHtml(
        reply,
        editor(req, `Edit hook ${id}`, `${root}/hooks/${seg(id)}`, f, errors, 'Replace hook'),
        400,
      );
    }
  });

  app.post('/hooks/:id/delete', async (req, reply) => {
    const { ctx } = sessionOf(req);
    await hooks.delete(ctx.user, idOf(req));
    return reply.redirect(`${root}/hooks`, 303);
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

function secretView(root: string, csrf: string, hookId: string, secret: string): Html {
  return html`<p><code class="secret">${secret}</code></p>
<form hx-post="${root}/hooks/${seg(hookId)}/secret/rotate" hx-target="#secret" hx-confirm="Rotate the signing secret? Receivers must accept the new one within the grace period.">
<input type="hidden" name="_csrf" value="${csrf}"><button type="submit">Rotate secret</button></form>`;
}

function dryRunPanel(root: string, csrf: string): Html {
  return html`<section aria-labelledby="h-dry"><h2 id="h-dry">Dry run</h2>
<p>Which of your saved hooks fire for a request, and the exact request each would send (as <code>POST /_hookd/match</code> answers).</p>
<form class="filters" hx-post="${root}/hooks/dry-run" hx-target="#dry-result">
<input type="hidden" name="_csrf" value="${csrf}">
<label for="dr-method">Method</label> <input id="dr-method" name="Method" value="GET" size="7">
<label for="dr-path">Path</label> <input id="dr-path" name="Path" placeholder="/repositories/r1/items/7">
<label for="dr-status">Status</label> <input id="dr-status" name="StatusCode" inputmode="numeric" size="4" placeholder="200">
<label for="dr-user">Requested by</label> <input id="dr-user" name="User" size="10" placeholder="anonymous">
<button type="submit">Try</button>
</form>
<div id="dry-result" role="status" aria-live="polite"></div></section>`;
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
  if (q.after && DELIVERY_ID_SHAPE.test(q.after)) query.after = q.after;
  const pg = await deps.pipeline.list(hook.Id, query);
  const params = new URLSearchParams();
  for (const k of ['status', 'since', 'until']) if (q[k]) params.set(k, q[k]!);
  const self = `${root}/hooks/${seg(hook.Id)}?${params.toString()}`;
  const refresh = query.after === undefined;
  return html`<div id="log"${refresh ? html` hx-get="${self}${params.size ? '&' : ''}part=log" hx-trigger="every 2s" hx-swap="outerHTML"` : ''}>
<div class="table-wrap"><table class="log">
<caption class="visually-hidden">Deliveries of this hook, newest first</caption>
<thead><tr><th scope="col">Delivery</th><th scope="col">Created</th><th scope="col">Trigger</th><th scope="col">Status</th><th scope="col">Attempts</th></tr></thead>
<tbody>
${pg.items.map(
  (d) => html`<tr><td><a href="${root}/deliveries/${seg(d.id)}">${d.id}</a></td><td>${time(d.created)}</td>
<td><code>${d.trigger.method} ${d.trigger.path}</code>${d.trigger.statusCode !== undefined ? html` → ${d.trigger.statusCode}` : ''}</td>
<td>${statusBadge(d.status, d.lastStatusCode)}</td><td>${d.attempts}</td></tr>`,
)}
</tbody></table></div>
${pg.items.length === 0 ? html`<p>No deliveries${params.size ? ' match these filters' : ' yet'}.</p>` : ''}
<p class="paging">${query.after ? html`<a href="${self}">Newest</a> ` : ''}${pg.next ? html`<a href="${self}${params.size ? '&' : ''}after=${pg.next}">Older</a>` : ''}</p>
</div>`;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** A 24-bar sparkline as inline SVG (server-drawn: no script, no inline style). */
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
    const hOk = (v / max) * 20;
    const hBad = (bad[i]! / max) * 20;
    return html`<rect class="ok" x="${i * 4}" y="${20 - hOk}" width="3" height="${hOk}"></rect><rect class="bad" x="${i * 4}" y="${20 - hOk - hBad}" width="3" height="${hBad}"></rect>`;
  });
  return html`<svg class="spark" viewBox="0 0 96 20" width="96" height="20" role="img" aria-label="${total} delivered, ${failed} failed in 24 hours"><title>${total} delivered, ${failed} failed in 24 hours</title>${bars}</svg>`;
}

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { contentOf } from '../../api/index.js';
import type { Preview } from '../../engine/index.js';
import { type FieldError, HookdError } from '../../errors/index.js';
import { DEFAULT_FILTER_BODY_LIMIT } from '../../filter/index.js';
import type { Hook, HookConfig } from '../../hook/index.js';
import { type LintInput, lintHook } from '../../hook/index.js';
import {
  blankForm,
  EMPTY_FORM,
  editedHook,
  errorSlot,
  errorsByField,
  FORM_FIELDS,
  forCheck,
  formToHook,
  hookForm,
  hookToForm,
  jsonView,
  summary,
} from '../hook-form.js';
import { type Html, html, seg } from '../html.js';
import { page } from '../layout.js';
import type { PageDeps } from '../page-deps.js';
import { formOf, sendHtml, sessionOf } from '../respond.js';

function idOf(req: FastifyRequest): string {
  return (req.params as { id: string }).id;
}

export function validationErrors(err: unknown): FieldError[] | undefined {
  if (err instanceof HookdError && err.code === 'VALIDATION_FAILED')
    return err.errors ?? [{ field: '(body)', message: err.message }];
  // A Name another of the user's hooks has: shown beside the field like any other refusal.
  if (err instanceof HookdError && err.code === 'CONFLICT' && err.errors) return err.errors;
  return undefined;
}

/** What the lint can read of a document that did not validate: the warnings still show beside the errors. */
function lintable(doc: Record<string, unknown>): LintInput | undefined {
  if (typeof doc.PathPattern !== 'string' || !Array.isArray(doc.Methods)) return undefined;
  if (!doc.Methods.every((m) => typeof m === 'string')) return undefined;
  return {
    PathPattern: doc.PathPattern,
    Methods: doc.Methods as string[],
    Type: typeof doc.Type === 'number' ? doc.Type : 1,
    CallbackContent: typeof doc.CallbackContent === 'string' ? doc.CallbackContent : undefined,
    CallbackContentMediaType:
      typeof doc.CallbackContentMediaType === 'string' ? doc.CallbackContentMediaType : undefined,
    ContentEscape: typeof doc.ContentEscape === 'string' ? doc.ContentEscape : undefined,
  };
}

/** The editor: create, replace, delete, live validation and a dry run that includes the hook being edited. */
export function hookEditorPages(app: FastifyInstance, deps: PageDeps): void {
  const { root, hooks } = deps;

  const editor = (
    req: FastifyRequest,
    title: string,
    action: string,
    values: Record<string, string>,
    errors: FieldError[],
    submit: string,
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
${dryRunPanel(root, ctx.csrf)}`,
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
    const doc = forCheck(formToHook(f), f);
    let errors: FieldError[] = [];
    let warnings: FieldError[] = [];
    try {
      // The API's own lint (docs/API.md "Warnings"): what create would accept but likely not mean.
      const editing = f._editing && /^hk_/.test(f._editing) ? f._editing : undefined;
      warnings = lintHook(await hooks.check(doc, sessionOf(req).ctx.user, editing)).warnings;
    } catch (err) {
      const e = validationErrors(err);
      if (!e) throw err;
      errors = e;
      const l = lintable(doc);
      if (l) warnings = lintHook(l).warnings;
    }
    const byField = errorsByField(errors);
    const warned = errorsByField(warnings);
    const head = blankForm(f)
      ? html`<p class="hint">Fill in a path pattern and a callback URL to begin.</p>`
      : summary(byField, warned);
    return sendHtml(
      reply,
      html`${head}
${FORM_FIELDS.map((k) => errorSlot(k, byField.get(k) ?? [], true, warned.get(k) ?? []))}
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
    const trigger = {
      method,
      path: p,
      uri: () => `${deps.reportBase(req)}${path}`,
      user: (f.User ?? '').trim(),
      ...(status !== undefined && { statusCode: status }),
      ...tryContent(f.TryHeaders, f.TryBody, f.TryResponseBody),
    };
    const saved = await deps.engine.preview(ctx.user, trigger);
    // The hook in the editor, as it stands (when it validates), judged as the saved ones are.
    let draft: Preview[] = [];
    let draftNote: Html = html``;
    if (f.PathPattern !== undefined) {
      try {
        const editing = f._editing && /^hk_/.test(f._editing) ? f._editing : undefined;
        const config: HookConfig = await hooks.check(forCheck(formToHook(f), f), ctx.user, editing);
        const hook: Hook = {
          ...config,
          Id: editing ?? '(this form)',
          Owner: ctx.user,
          Modified: new Date().toISOString(),
          State: 'active',
        };
        draft = await deps.engine.previewDraft(hook, trigger);
      } catch (err) {
        if (!validationErrors(err)) throw err;
        draftNote = html`<p class="hint">The hook in the form is not included: it has errors to fix first.</p>`;
      }
    }
    const editingId = f._editing;
    const previews = [
      ...draft.map((pv) => ({ pv, draft: true })),
      ...saved.filter((pv) => pv.hook.Id !== editingId).map((pv) => ({ pv, draft: false })),
    ];
    if (previews.length === 0)
      return sendHtml(
        reply,
        html`<p>Neither the hook in the form nor any saved hook of yours fires for ${method} ${path}${trigger.user ? ` made by ${trigger.user}` : ' made anonymously'}.</p>${draftNote}`,
      );
    return sendHtml(
      reply,
      html`<p>${previews.length} hook${previews.length === 1 ? '' : 's'} fire${previews.length === 1 ? 's' : ''}:</p>${draftNote}
${previews.map(
  ({ pv, draft: d }) => html`<article class="preview"${d ? html` data-draft="true"` : ''}><h3>${
    d ? html`The hook in this form` : html`<a href="${root}/hooks/${seg(pv.hook.Id)}">${pv.hook.Id}</a>`
  } · ${pv.hook.PathPattern}</h3>
<p><strong>${pv.request.method}</strong> <code>${pv.request.url}</code></p>
${pv.filter === undefined ? '' : html`<p class="${pv.filter.error ? 'error' : pv.filter.matched ? 'ok' : 'hint'}">Filter: ${pv.filter.matched ? 'matched' : pv.filter.error ? `no match (error: ${pv.filter.error})` : 'no match: it does not fire'}</p>`}
${pv.transform?.error ? html`<p class="error">${pv.transform.error}</p>` : pv.transform?.skip ? html`<p class="hint">Transform: skip (nothing is sent)</p>` : ''}
<pre class="json">${Object.entries({ ...pv.request.headers, ...pv.transform?.headers })
    .map(([k, v]) => `${k}: ${v}`)
    .join(
      '\n',
    )}${(pv.transform?.payload ?? pv.request.body) !== undefined ? `\n\n${pv.transform?.payload ?? pv.request.body}` : ''}</pre></article>`,
)}`,
    );
  });

  app.get('/hooks/:id/edit', async (req, reply) => {
    const hook = await hooks.get(sessionOf(req).ctx.user, idOf(req));
    return sendHtml(
      reply,
      editor(
        req,
        // Named as the hook's page and the hook list name it.
        `Edit hook ${typeof hook.Name === 'string' ? hook.Name : hook.Id}`,
        `${root}/hooks/${seg(hook.Id)}`,
        { ...hookToForm(hook), _editing: hook.Id },
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
      const current = await hooks.get(ctx.user, id);
      const hook = await hooks.replace(
        ctx.user,
        id,
        keepClientSecret(editedHook(current, formToHook(f)), current),
      );
      return reply.redirect(`${root}/hooks/${seg(hook.Id)}`, 303);
    } catch (err) {
      const errors = validationErrors(err);
      if (!errors) throw err;
      return sendHtml(
        reply,
        editor(
          req,
          `Edit hook ${typeof f.Name === 'string' && f.Name.trim() !== '' ? f.Name.trim() : id}`,
          `${root}/hooks/${seg(id)}`,
          f,
          errors,
          'Replace hook',
        ),
        400,
      );
    }
  });

  app.post('/hooks/:id/delete', async (req, reply) => {
    const { ctx } = sessionOf(req);
    await hooks.delete(ctx.user, idOf(req));
    return reply.redirect(`${root}/hooks`, 303);
  });
}

function dryRunPanel(root: string, csrf: string): Html {
  return html`<section aria-labelledby="h-dry"><h2 id="h-dry">Dry run</h2>
<p>Which hooks fire for a request: the one in the form above (as it stands, unsaved) and your saved ones, with the exact request each would send (as <code>POST /_hookd/match</code> answers). Nothing is sent.</p>
<form class="filters" hx-post="${root}/hooks/dry-run" hx-target="#dry-result" hx-include="#hook-form">
<input type="hidden" name="_csrf" value="${csrf}">
<label for="dr-method">Method</label> <input id="dr-method" name="Method" value="GET" size="7">
<label for="dr-path">Path</label> <input id="dr-path" name="Path" placeholder="/repositories/r1/items/7">
<label for="dr-status">Status</label> <input id="dr-status" name="StatusCode" inputmode="numeric" size="4" placeholder="200">
<label for="dr-user">Requested by</label> <input id="dr-user" name="User" size="10" placeholder="anonymous">
<label for="dr-headers">Request headers</label> <textarea id="dr-headers" name="TryHeaders" rows="2" spellcheck="false" placeholder="Content-Type: application/json"></textarea>
<label for="dr-body">Request body</label> <textarea id="dr-body" name="TryBody" rows="3" spellcheck="false" placeholder='{"quality": "bad"}'></textarea>
<label for="dr-rbody">Response body</label> <textarea id="dr-rbody" name="TryResponseBody" rows="2" spellcheck="false" placeholder='{"Points": 1440}'></textarea>
<button type="submit">Try</button>
</form>
<div id="dry-result" role="status" aria-live="polite"></div></section>`;
}

/**
 * The "try it" box's headers ("Name: value" per line) and bodies, as a report's content: the
 * filter and the transform of each hook judge them (a body that parses as JSON is JSON).
 */
function tryContent(headers = '', body = '', responseBody = '') {
  const list: Record<string, string> = {};
  for (const line of headers.split(/\r?\n/)) {
    const i = line.indexOf(':');
    if (i > 0) list[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  const value = (t: string): unknown => {
    if (t.trim() === '') return undefined;
    try {
      return JSON.parse(t) as unknown;
    } catch {
      return t;
    }
  };
  return contentOf(
    { Headers: list, Body: value(body), ResponseBody: value(responseBody) },
    DEFAULT_FILTER_BODY_LIMIT,
    [],
  );
}

/** An edit that leaves the write-only OAuth2 client secret (or the client key) empty keeps the stored one. */
function keepClientSecret(doc: Record<string, unknown>, stored: Hook): Record<string, unknown> {
  const o = (doc.Auth as { OAuth2?: Record<string, unknown> } | undefined)?.OAuth2;
  const secret = stored.Auth?.OAuth2.ClientSecret;
  if (o !== undefined && o.ClientSecret === undefined && secret !== undefined) o.ClientSecret = secret;
  // Likewise the client key of mutual TLS, kept while the form still gives a certificate.
  const tls = doc.Tls as Record<string, unknown> | undefined;
  const key = stored.Tls?.ClientKey;
  if (tls?.ClientCertificate !== undefined && tls.ClientKey === undefined && key !== undefined)
    tls.ClientKey = key;
  return doc;
}

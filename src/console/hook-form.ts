import type { FieldError } from '../errors/index.js';
import { CALLBACK_METHODS, CONTENT_ESCAPES, type Hook } from '../hook/index.js';
import { type Html, html } from './html.js';

/** The form's fields, in order; each has an error slot `err-<name>` next to it. */
export const FORM_FIELDS = [
  'PathPattern',
  // Kept through an edit (a replace without it would drop the hook's Name).
  'Name',
  'Methods',
  'Type',
  'StatusCodeWhiteList',
  'StatusCodeBlackList',
  'Callback',
  'CallbackMethod',
  'Headers',
  'CallbackContentMediaType',
  'CallbackContent',
  'ContentEscape',
  'Filter',
  'Transform',
  'RetrySchedule',
  'RateLimit',
  'Auth',
  'Tls',
  'Persist',
] as const;

type Form = Record<string, string>;

const list = (s: string | undefined): string[] =>
  (s ?? '')
    .split(/[\s,]+/)
    .map((x) => x.trim())
    .filter((x) => x !== '');

/** Numbers where the text is a number; other text is passed on for the validator to name. */
const numbers = (s: string | undefined): unknown[] =>
  list(s).map((x) => (/^-?\d+(\.\d+)?$/.test(x) ? Number(x) : x));

/** The hook document a form describes: exactly what `POST /hooks` would be sent. */
export function formToHook(f: Form): Record<string, unknown> {
  const hook: Record<string, unknown> = {
    PathPattern: f.PathPattern ?? '',
    Methods: list(f.Methods),
    Type: /^\d+$/.test(f.Type ?? '') ? Number(f.Type) : f.Type,
    StatusCodeWhiteList: numbers(f.StatusCodeWhiteList),
    StatusCodeBlackList: numbers(f.StatusCodeBlackList),
    Callback: f.Callback ?? '',
    CallbackMethod: f.CallbackMethod || 'POST',
    Headers: headersOf(f.Headers ?? ''),
    Persist: f.Persist === 'on' || f.Persist === 'true',
  };
  if (f.Name?.trim()) hook.Name = f.Name.trim();
  if (f.CallbackContentMediaType) hook.CallbackContentMediaType = f.CallbackContentMediaType;
  if (f.CallbackContent) hook.CallbackContent = f.CallbackContent;
  if (f.ContentEscape && f.ContentEscape !== 'none') hook.ContentEscape = f.ContentEscape;
  if (f.Filter?.trim()) hook.Filter = f.Filter;
  if (f.Transform?.trim()) hook.Transform = f.Transform;
  if (f.RetrySchedule?.trim()) hook.RetrySchedule = numbers(f.RetrySchedule);
  const perSecond = numbers(f.RateLimitPerSecond);
  const burst = numbers(f.RateLimitBurst);
  if (perSecond.length > 0 || burst.length > 0)
    hook.RateLimit = {
      ...(perSecond.length > 0 && {
        PerSecond: perSecond.length === 1 ? perSecond[0] : f.RateLimitPerSecond,
      }),
      ...(burst.length > 0 && { Burst: burst.length === 1 ? burst[0] : f.RateLimitBurst }),
    };
  const [tokenUrl, clientId, secret, scope] = [
    f.AuthTokenUrl,
    f.AuthClientId,
    f.AuthClientSecret,
    f.AuthScope,
  ];
  if (tokenUrl?.trim() || clientId?.trim())
    hook.Auth = {
      OAuth2: {
        TokenUrl: tokenUrl?.trim() ?? '',
        ClientId: clientId?.trim() ?? '',
        // Write-only: empty while editing keeps the stored secret (the editor fills it in).
        ...(secret && { ClientSecret: secret }),
        ...(scope?.trim() && { Scope: scope.trim() }),
      },
    };
  // Text areas send CRLF line ends: PEM is kept with LF, as hookctl and the API send it.
  const pem = (t: string | undefined) => (t ?? '').replace(/\r\n?/g, '\n').trim();
  const [cert, key, ca] = [pem(f.TlsClientCertificate), pem(f.TlsClientKey), pem(f.TlsCaCertificates)];
  if (cert || key || ca)
    hook.Tls = {
      ...(cert && { ClientCertificate: `${cert}\n` }),
      // Write-only: empty while editing keeps the stored key (the editor fills it in).
      ...(key && { ClientKey: `${key}\n` }),
      ...(ca && { CaCertificates: `${ca}\n` }),
    };
  return hook;
}

/**
 * The document as the live checks judge it: while editing a hook whose client secret is set, an
 * empty secret field means "keep it", so a stand-in takes its place (never stored: the replace
 * fills in the stored secret itself).
 */
export function forCheck(doc: Record<string, unknown>, f: Form): Record<string, unknown> {
  const o = (doc.Auth as { OAuth2?: Record<string, unknown> } | undefined)?.OAuth2;
  if (o !== undefined && o.ClientSecret === undefined && f._authSecretSet) o.ClientSecret = 'kept';
  // A kept client key cannot be stood in for: the certificate is judged with it when saved.
  const tls = doc.Tls as Record<string, unknown> | undefined;
  if (tls !== undefined && tls.ClientKey === undefined && f._tlsKeySet) delete tls.ClientCertificate;
  if (tls !== undefined && Object.keys(tls).length === 0) delete doc.Tls;
  return doc;
}

function headersOf(text: string): Record<string, string> | string {
  const out: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === '') continue;
    const i = line.indexOf(':');
    // A line without a colon: passed on whole, so the validator names it.
    if (i <= 0) return text;
    out[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  return out;
}

/** A stored hook as the form's values. */
export function hookToForm(h: Hook): Form {
  return {
    PathPattern: h.PathPattern,
    Name: h.Name ?? '',
    Methods: h.Methods.join(', '),
    Type: String(h.Type),
    StatusCodeWhiteList: h.StatusCodeWhiteList.join(', '),
    StatusCodeBlackList: h.StatusCodeBlackList.join(', '),
    Callback: h.Callback,
    CallbackMethod: h.CallbackMethod,
    Headers: Object.entries(h.Headers)
      .map(([k, v]) => `${k}: ${v}`)
      .join('\n'),
    CallbackContentMediaType: h.CallbackContentMediaType,
    CallbackContent: h.CallbackContent ?? '',
    ContentEscape: h.ContentEscape ?? 'none',
    Filter: h.Filter ?? '',
    Transform: h.Transform ?? '',
    RetrySchedule: h.RetrySchedule?.join(', ') ?? '',
    RateLimitPerSecond: h.RateLimit ? String(h.RateLimit.PerSecond) : '',
    RateLimitBurst: h.RateLimit ? String(h.RateLimit.Burst) : '',
    AuthTokenUrl: h.Auth?.OAuth2.TokenUrl ?? '',
    AuthClientId: h.Auth?.OAuth2.ClientId ?? '',
    // The secret never goes into a page: the field stays empty and says it is set.
    AuthClientSecret: '',
    _authSecretSet: h.Auth ? 'yes' : '',
    AuthScope: h.Auth?.OAuth2.Scope ?? '',
    // Certificates are public: shown as stored. The key never goes into a page.
    TlsClientCertificate: h.Tls?.ClientCertificate ?? '',
    TlsClientKey: '',
    _tlsKeySet: h.Tls?.ClientKey !== undefined ? 'yes' : '',
    TlsCaCertificates: h.Tls?.CaCertificates ?? '',
    Persist: h.Persist ? 'on' : '',
  };
}

export const EMPTY_FORM: Form = {
  PathPattern: '',
  Name: '',
  Methods: '*',
  Type: '1',
  StatusCodeWhiteList: '',
  StatusCodeBlackList: '',
  Callback: '',
  CallbackMethod: 'POST',
  Headers: '',
  CallbackContentMediaType: '',
  CallbackContent: '',
  ContentEscape: 'none',
  Filter: '',
  Transform: '',
  RetrySchedule: '',
  RateLimitPerSecond: '',
  RateLimitBurst: '',
  AuthTokenUrl: '',
  AuthClientId: '',
  AuthClientSecret: '',
  AuthScope: '',
  TlsClientCertificate: '',
  TlsClientKey: '',
  TlsCaCertificates: '',
  Persist: 'on',
};

/** The form field an error of the validator belongs to (`Methods[1]` → Methods); else the summary. */
export function fieldOf(e: FieldError): string {
  const base = e.field.split(/[.[]/)[0]!;
  return (FORM_FIELDS as readonly string[]).includes(base) ? base : '';
}

/** Error messages per field ('' = not tied to a field). */
export function errorsByField(errors: readonly FieldError[]): Map<string, string[]> {
  const m = new Map<string, string[]>();
  for (const e of errors) {
    const f = fieldOf(e);
    const text = f === '' || e.field === f ? e.message : `${e.field} ${e.message}`;
    m.set(f, [...(m.get(f) ?? []), f === '' ? `${e.field} ${e.message}` : text]);
  }
  return m;
}

const LABELS: Record<string, string> = {
  PathPattern: 'Path pattern',
  Name: 'Name (optional; unique among your hooks)',
  Methods: 'Methods (comma-separated, * for any)',
  Type: 'Type',
  StatusCodeWhiteList: 'Only for status codes',
  StatusCodeBlackList: 'Not for status codes',
  Callback: 'Callback URL',
  CallbackMethod: 'Callback method',
  Headers: 'Headers (one "Name: value" per line)',
  CallbackContentMediaType: 'Body media type',
  CallbackContent: 'Body template (empty: the JSON event document)',
  ContentEscape: 'Chat markup escaping of substituted values',
  Filter: 'Filter: a CEL expression that must be true (empty: every request)',
  Transform: 'Transform: function transform(event) { … } (empty: the callback as rendered)',
  RetrySchedule: 'Retry schedule, seconds (empty: the daemon’s)',
  RateLimitPerSecond: 'Rate limit: callbacks per second (empty: none)',
  RateLimitBurst: 'Rate limit: burst (empty: one second’s worth)',
  Persist: 'Persist (kept across restarts)',
  AuthTokenUrl: 'OAuth2 token URL',
  AuthClientId: 'OAuth2 client Id',
  AuthClientSecret: 'OAuth2 client secret (write-only)',
  AuthScope: 'OAuth2 scope (optional)',
  TlsClientCertificate: 'Client certificate (PEM)',
  TlsClientKey: 'Client key (PEM, write-only)',
  TlsCaCertificates: 'CA certificates of the receiver (PEM, optional)',
};

// Short: a select is as wide as its longest option, and the form must fit a phone.
const ESCAPE_LABELS: Record<(typeof CONTENT_ESCAPES)[number], string> = {
  none: 'none',
  slack: 'slack',
  mattermost: 'mattermost',
  discord: 'discord',
  markdown: 'markdown · Teams',
};

/** The error slot of a field: replaced out of band by each live validation. */
export function errorSlot(
  field: string,
  messages: readonly string[] = [],
  oob = false,
  warnings: readonly string[] = [],
): Html {
  // Errors in red; warnings (saved anyway) in amber, after them, so the two never look alike.
  return html`<span class="field-error" id="err-${field}" role="status"${oob ? html` hx-swap-oob="true"` : ''}>${messages.join('; ')}${
    warnings.length
      ? html`<span class="field-warning">${messages.length ? ' ' : ''}Warning: ${warnings.join('; ')}</span>`
      : ''
  }</span>`;
}

/** The hook editor's form; `action` is where it is submitted (create or replace). */
export function hookForm(
  root: string,
  csrf: string,
  action: string,
  values: Form,
  errors: Map<string, string[]>,
  submitLabel: string,
): Html {
  const v = (k: string) => values[k] ?? '';
  // The optional OAuth2 and mTLS sections are folded unless the hook uses them (or an error
  // there needs to be seen): most hooks have neither, and open they push Persist off screen.
  const used = (keys: string[], setFlag: string | undefined, field: string) =>
    keys.some((k) => v(k).trim() !== '') || (setFlag ?? '') !== '' || errors.has(field) ? html` open` : '';
  const authOpen = used(['AuthTokenUrl', 'AuthClientId', 'AuthScope'], values._authSecretSet, 'Auth');
  const tlsOpen = used(['TlsClientCertificate', 'TlsCaCertificates'], values._tlsKeySet, 'Tls');
  const described = (k: string) =>
    html` aria-describedby="err-${k}"${errors.has(k) ? html` aria-invalid="true"` : ''}`;
  const input = (k: string, type = 'text', extra: Html = html``) =>
    html`<div class="field"><label for="f-${k}">${LABELS[k]}</label>
<input id="f-${k}" name="${k}" type="${type}" value="${v(k)}"${described(k)}${extra}>
${errorSlot(k, errors.get(k))}</div>`;
  const select = (k: string, options: [string, string][]) =>
    html`<div class="field"><label for="f-${k}">${LABELS[k]}</label>
<select id="f-${k}" name="${k}"${described(k)}>${options.map(
      ([val, label]) => html`<option value="${val}"${v(k) === val ? html` selected` : ''}>${label}</option>`,
    )}</select>
${errorSlot(k, errors.get(k))}</div>`;
  const area = (k: string, rows: number) =>
    html`<div class="field wide"><label for="f-${k}">${LABELS[k]}</label>
<textarea id="f-${k}" name="${k}" rows="${rows}" spellcheck="false"${described(k)}>${v(k)}</textarea>
${errorSlot(k, errors.get(k))}</div>`;
  return html`<form id="hook-form" class="hook-form" method="post" action="${action}" novalidate
  hx-post="${root}/hooks/validate" hx-trigger="input delay:400ms, change" hx-target="#validation" hx-swap="innerHTML">
<input type="hidden" name="_csrf" value="${csrf}">
${values._editing ? html`<input type="hidden" name="_editing" value="${values._editing}">` : ''}
${values._authSecretSet ? html`<input type="hidden" name="_authSecretSet" value="yes">` : ''}
${values._tlsKeySet ? html`<input type="hidden" name="_tlsKeySet" value="yes">` : ''}
<div id="validation" class="summary" role="status" aria-live="polite">${errors.size > 0 ? summary(errors) : ''}</div>
<div class="grid">
${input('PathPattern', 'text', html` placeholder="/repositories/(*)/items/(*)"`)}
${input('Name', 'text', html` placeholder="orders-created"`)}
${input('Methods')}
${select('Type', [
  ['0', '0 · BeforeCompletion'],
  ['1', '1 · AfterCompletion'],
])}
${input('StatusCodeWhiteList')}
${input('StatusCodeBlackList')}
${input('Callback', 'text', html` inputmode="url" placeholder="https://receiver.example/hook"`)}
${select(
  'CallbackMethod',
  CALLBACK_METHODS.map((m) => [m, m]),
)}
${input('CallbackContentMediaType', 'text', html` placeholder="application/json"`)}
${area('Headers', 3)}
${area('CallbackContent', 5)}
${select(
  'ContentEscape',
  CONTENT_ESCAPES.map((m) => [m, ESCAPE_LABELS[m]]),
)}
${area('Filter', 2)}
${area('Transform', 6)}
${input('RetrySchedule', 'text', html` placeholder="0, 5, 300"`)}
<fieldset class="field wide rate"><legend>Rate limit (optional)</legend>
<div class="pair"><div class="field"><label for="f-RateLimitPerSecond">${LABELS.RateLimitPerSecond}</label>
<input id="f-RateLimitPerSecond" name="RateLimitPerSecond" inputmode="decimal" value="${v('RateLimitPerSecond')}" placeholder="10"${described('RateLimit')}></div>
<div class="field"><label for="f-RateLimitBurst">${LABELS.RateLimitBurst}</label>
<input id="f-RateLimitBurst" name="RateLimitBurst" inputmode="numeric" value="${v('RateLimitBurst')}" placeholder="10"${described('RateLimit')}></div></div>
${errorSlot('RateLimit', errors.get('RateLimit'))}</fieldset>
<details class="field wide fold auth"${authOpen}><summary>OAuth2 client credentials (optional): hookd sends a bearer token</summary>
<fieldset class="auth"><legend class="visually-hidden">OAuth2 client credentials</legend>
<div class="pair"><div class="field"><label for="f-AuthTokenUrl">${LABELS.AuthTokenUrl}</label>
<input id="f-AuthTokenUrl" name="AuthTokenUrl" inputmode="url" value="${v('AuthTokenUrl')}" placeholder="https://auth.example.com/oauth2/token"${described('Auth')}></div>
<div class="field"><label for="f-AuthClientId">${LABELS.AuthClientId}</label>
<input id="f-AuthClientId" name="AuthClientId" value="${v('AuthClientId')}"${described('Auth')}></div></div>
<div class="pair"><div class="field"><label for="f-AuthClientSecret">${LABELS.AuthClientSecret}</label>
<input id="f-AuthClientSecret" name="AuthClientSecret" type="password" autocomplete="new-password" value="" placeholder="${values._authSecretSet ? '(set): leave empty to keep it' : ''}"${described('Auth')}></div>
<div class="field"><label for="f-AuthScope">${LABELS.AuthScope}</label>
<input id="f-AuthScope" name="AuthScope" value="${v('AuthScope')}"${described('Auth')}></div></div>
${errorSlot('Auth', errors.get('Auth'))}</fieldset></details>
<details class="field wide fold tls"${tlsOpen}><summary>Client certificate (optional): mutual TLS toward an https receiver</summary>
<fieldset class="tls"><legend class="visually-hidden">Client certificate</legend>
<div class="field wide"><label for="f-TlsClientCertificate">${LABELS.TlsClientCertificate}</label>
<textarea id="f-TlsClientCertificate" name="TlsClientCertificate" rows="3" spellcheck="false" placeholder="-----BEGIN CERTIFICATE-----"${described('Tls')}>${v('TlsClientCertificate')}</textarea></div>
<div class="field wide"><label for="f-TlsClientKey">${LABELS.TlsClientKey}</label>
<textarea id="f-TlsClientKey" name="TlsClientKey" rows="3" spellcheck="false" autocomplete="off" placeholder="${values._tlsKeySet ? '(set): leave empty to keep it' : '-----BEGIN PRIVATE KEY-----'}"${described('Tls')}></textarea></div>
<div class="field wide"><label for="f-TlsCaCertificates">${LABELS.TlsCaCertificates}</label>
<textarea id="f-TlsCaCertificates" name="TlsCaCertificates" rows="3" spellcheck="false" placeholder="-----BEGIN CERTIFICATE-----"${described('Tls')}>${v('TlsCaCertificates')}</textarea></div>
${errorSlot('Tls', errors.get('Tls'))}</fieldset></details>
<div class="field check"><input id="f-Persist" name="Persist" type="checkbox"${v('Persist') === 'on' ? html` checked` : ''}${described('Persist')}>
<label for="f-Persist">${LABELS.Persist}</label>${errorSlot('Persist', errors.get('Persist'))}</div>
</div>
<p><button type="submit" class="primary">${submitLabel}</button></p>
</form>`;
}

/**
 * The line above the form after a live check: how many errors (each is beside its field), how
 * many warnings (likewise, in amber); only what belongs to no field is spelt out here.
 */
export function summary(errors: Map<string, string[]>, warnings: Map<string, string[]> = new Map()): Html {
  const n = [...errors.values()].reduce((a, l) => a + l.length, 0);
  const w = [...warnings.values()].reduce((a, l) => a + l.length, 0);
  if (n === 0 && w === 0) return html`<p class="ok">No problems found.</p>`;
  return html`${n > 0 ? html`<p class="error">${n} problem${n === 1 ? '' : 's'} to fix before saving (shown beside the fields).</p>` : ''}
${(errors.get('') ?? []).map((m) => html`<p class="error">${m}</p>`)}
${w > 0 ? html`<p class="warning">${w} warning${w === 1 ? '' : 's'}: the hook can be saved, but check ${w === 1 ? 'it' : 'them'} (beside the fields).</p>` : ''}
${(warnings.get('') ?? []).map((m) => html`<p class="warning">Warning: ${m}</p>`)}`;
}

/** Whether a form is still blank: nothing to judge yet. */
export function blankForm(f: Form): boolean {
  return (f.PathPattern ?? '').trim() === '' && (f.Callback ?? '').trim() === '';
}

/** The JSON view of the hook the form describes. */
export function jsonView(hook: unknown, oob = false): Html {
  return html`<pre id="hook-json" class="json" tabindex="0" aria-label="The hook as JSON"${oob ? html` hx-swap-oob="true"` : ''}>${JSON.stringify(hook, (k, v) => (k === 'ClientSecret' || k === 'ClientKey' ? '(set)' : v), 2)}</pre>`;
}

/**
 * Fields of a hook that the form does not edit. A replace sends the whole hook, so an edit in the
 * form carries these over from the stored hook; otherwise saving the form would silently drop a
 * hook's signature schemes, ordering key or verification. (`Auth` and `Tls` are in the form:
 * emptied there, they are removed; their write-only secret and key are kept by the editor.)
 */
const NOT_IN_FORM = ['Signature', 'Ordering', 'Verification'] as const;

/** The document a form edit replaces `current` with: the form's fields, the rest kept. */
export function editedHook(current: Hook, fromForm: Record<string, unknown>): Record<string, unknown> {
  const doc: Record<string, unknown> = {};
  const stored = current as unknown as Record<string, unknown>;
  for (const k of NOT_IN_FORM) if (stored[k] !== undefined) doc[k] = stored[k];
  return { ...doc, ...fromForm };
}

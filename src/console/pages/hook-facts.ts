/**
 * The hook page's facts: a place for every field of the hook's JSON Schema, each group marked
 * with the fields it shows (`data-field`), so that a field the schema gains and the page does not
 * show is caught (test/console/hook-page-schema.test.ts). A field the hook leaves out is shown as
 * what it means then (the default, none).
 */
import { presentTls } from '../../client-tls/index.js';
import type { Hook } from '../../hook/index.js';
import { schemeLabel } from '../../signing/index.js';
import { withoutPassword } from '../../util/index.js';
import { type Html, html } from '../html.js';
import { copyable, statusBadge, time } from '../layout.js';

/** What the page knows of the hook beyond its stored fields. */
export interface FactsView {
  readonly state: string;
  readonly pace: Html | string;
  readonly verified?: { At: string; Result: string; NextAt?: string } | undefined;
  /** How many lint warnings the page lists below the facts (the API's `Warnings`). */
  readonly warnings: number;
}

const none = (text = 'none') => html`<span class="hint">${text}</span>`;

/** One group: a label and its value, marked with the schema fields it shows. */
function row(fields: string, label: string, value: Html | string, cls = ''): Html {
  return html`<div data-field="${fields}"><dt>${label}</dt><dd${cls === '' ? '' : html` class="${cls}"`}>${value}</dd></div>`;
}

function tlsText(hook: Hook): Html {
  if (hook.Tls === undefined) return none('none: the system’s CA certificates, no client certificate');
  const v = presentTls(hook.Tls);
  return html`${
    v.Certificate
      ? html`client certificate <code>${v.Certificate.Subject}</code> until ${time(v.Certificate.NotAfter)}${v.ClientKey ? ', key (set)' : ''}`
      : 'no client certificate'
  }; ${v.CaCertificates ? html`CA <code>${v.CaCertificates.join(', ')}</code>` : 'the system’s CA certificates'}`;
}

function codeBlock(label: string, text: string | undefined, absent: string): Html {
  return text === undefined
    ? none(absent)
    : html`<pre class="json" tabindex="0" aria-label="${label}">${text}</pre>`;
}

/** The hook's Filter and Transform, and the filter's last evaluation error (an error is no match). */
export function hookCode(hook: Hook, lastError: { At: string; Error: string } | undefined): Html {
  return html`<dl class="facts hook-code">
${row('Filter', 'Filter', codeBlock('Filter', hook.Filter, 'none: every request the pattern selects'))}
${
  lastError === undefined
    ? html`<div data-field="LastFilterError" hidden></div>`
    : row(
        'LastFilterError',
        'Last filter error',
        html`${lastError.Error} (${time(lastError.At)}): the request did not fire the hook`,
        'error last-filter-error',
      )
}
${row('Transform', 'Transform', codeBlock('Transform', hook.Transform, 'none: the rendered callback as it is'))}
</dl>`;
}

/** Every field of the hook, as the API has it; header values behind a click (they may be credentials). */
export function hookFacts(hook: Hook, v: FactsView): Html {
  const headers = Object.entries(hook.Headers);
  const list = (l: readonly number[]) => (l.length === 0 ? none() : l.join(', '));
  const statuses =
    hook.Type === 1
      ? html`${row('StatusCodeWhiteList', 'Only for statuses', list(hook.StatusCodeWhiteList))}
${row('StatusCodeBlackList', 'Not for statuses', list(hook.StatusCodeBlackList))}`
      : row(
          'StatusCodeWhiteList StatusCodeBlackList',
          'Status lists',
          none('none: a BeforeCompletion hook fires before the status is known'),
        );
  const a = hook.Auth?.OAuth2;
  return html`<dl class="facts hook-facts">
${row('Name', 'Name', hook.Name ?? none())}
${row('Id', 'Id', copyable('hook-id', hook.Id))}
${row('Owner', 'Owner', hook.Owner)}
${row('PathPattern', 'Pattern', html`<code>${hook.PathPattern}</code>`)}
${row('Methods', 'Methods', hook.Methods.join(' '))}
${row('Type', 'Type', hook.Type === 0 ? '0 · BeforeCompletion' : '1 · AfterCompletion')}
${statuses}
${row('CallbackMethod Callback', 'Callback', html`${hook.CallbackMethod} <code>${withoutPassword(hook.Callback)}</code>`)}
${v.pace}
${row(
  'Headers',
  'Headers',
  headers.length === 0
    ? none('none of its own')
    : html`<details><summary>${headers.length} header${headers.length === 1 ? '' : 's'}: ${headers.map(([k]) => k).join(', ')} (show values)</summary>
<pre class="json">${headers.map(([k, val]) => `${k}: ${val}`).join('\n')}</pre></details>`,
)}
${row(
  'CallbackContentMediaType CallbackContent',
  'Body',
  html`${hook.CallbackContentMediaType} · ${
    hook.CallbackContent === undefined
      ? html`the JSON event document`
      : html`template:<pre class="json" tabindex="0" aria-label="Body template">${hook.CallbackContent}</pre>`
  }`,
)}
${row('ContentEscape', 'Chat escaping', hook.ContentEscape ?? none('none: values go in as the media type escapes them'), 'content-escape')}
${row('RetrySchedule', 'Retry schedule', hook.RetrySchedule ? hook.RetrySchedule.map((s) => `${s} s`).join(', ') : none('the daemon’s (--retry-schedule)'))}
${row('RateLimit', 'Rate limit', hook.RateLimit ? `${hook.RateLimit.PerSecond} per second, bursts of ${hook.RateLimit.Burst}` : none())}
${row('Persist', 'Persist', hook.Persist ? 'yes: deliveries survive a restart' : 'no: in memory only')}
${hook.Ordering ? row('Ordering', 'Ordering key', html`<code>${hook.Ordering.Key}</code>`) : row('Ordering', 'Ordering', none('none: deliveries go concurrently'))}
${row('Signature', 'Signature schemes', hook.Signature ? hook.Signature.Schemes.map(schemeLabel).join(' ') : none(`${schemeLabel('v1')} (the default)`))}
${row('Tls', 'TLS', tlsText(hook), 'tls')}
${row(
  'Auth',
  'OAuth2',
  a
    ? html`token from <code>${a.TokenUrl}</code> for client <code>${a.ClientId}</code>${a.Scope ? html`, scope <code>${a.Scope}</code>` : ''}; client secret (set)`
    : none(),
  'auth',
)}
${row('Verification', 'Verification', hook.Verification ?? none('the daemon’s (--callback-verification)'))}
${
  v.verified
    ? row(
        'VerificationResult',
        'Last handshake',
        html`${v.verified.Result} (${time(v.verified.At)})${v.verified.NextAt ? html`; next ${time(v.verified.NextAt)}` : ''}`,
        'verification-result',
      )
    : row('VerificationResult', 'Last handshake', none())
}
${row('Warnings', 'Warnings', v.warnings === 0 ? none() : `${v.warnings}, listed below`)}
${row(
  'State DisabledReason DisabledAt',
  'State',
  html`${statusBadge(v.state)}${hook.DisabledReason ? html` ${hook.DisabledReason}` : ''}${hook.DisabledAt ? html` (${time(hook.DisabledAt)})` : ''}`,
)}
${row('Modified', 'Modified', time(hook.Modified))}
</dl>`;
}

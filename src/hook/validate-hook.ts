import type { ErrorObject, ValidateFunction } from 'ajv';
import { checkTls } from '../client-tls/index.js';
import { type FieldError, HookdError } from '../errors/index.js';
import { compileFilter } from '../filter/index.js';
import { checkAuth } from '../oauth2/index.js';
import { checkSignature, HOOKD_SET_HEADERS, schemeHeader } from '../signing/index.js';
import { checkTransform } from '../transform/index.js';
import { didYouMean, suggest } from '../util/index.js';
import { CALLBACK_METHODS, type CallbackMethod, type HookConfig, type HookTypeId } from './hook.js';
import { NAME_RULE } from './hook-name.js';
import {
  HOOK_SCHEMA,
  KNOWN_FIELDS,
  MAX_RATE_BURST,
  MAX_RATE_PER_SECOND,
  MAX_RETRY_DELAY_SECONDS,
} from './hook-schema.js';
import { lintHook } from './lint-hook.js';
import { parseMediaType } from './media-type.js';
import { compilePattern } from './pattern.js';

/**
 * Checks a client's hook document and returns the normalised configuration, or throws one
 * VALIDATION_FAILED error listing every problem at once (field + rule), never just the first.
 *
 * The callback-target policy (SPEC §10) needs DNS, which is not the hook model's business: it is
 * passed in as `checkCallback` and only runs when the URL itself is well-formed.
 */
export interface ValidateOptions {
  /** `owner`: who asks (the admin is told what a refused host name resolved to, others the rule). */
  checkCallback?: (url: URL, owner?: string) => Promise<string | undefined>;
  /**
   * The Callback's scheme and shape as its transport judges them (the schemes the operator
   * allows, a broker URL's parts): a message naming the rule. Default: http and https only.
   */
  checkScheme?: (url: URL) => string | undefined;
  /** Header names the Callback's transport keeps for the message itself: a message naming them. */
  checkHeaders?: (url: URL, names: readonly string[]) => string | undefined;
}

/** Without transports to ask: HTTP(S) Callbacks only. */
function httpOnly(url: URL): string | undefined {
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return `scheme "${url.protocol.slice(0, -1)}" is not allowed: use http or https`;
  return url.hostname ? undefined : 'must name a host';
}

let shapeCheck: Promise<ValidateFunction> | undefined;

/**
 * The schema check, made on the first validation: loading ajv and compiling the schema (and ajv's
 * meta-schema with it) took about a tenth of the daemon's start-up, which validates nothing.
 */
function checkShape(): Promise<ValidateFunction> {
  shapeCheck ??= import('ajv').then(({ Ajv }) =>
    new Ajv({ allErrors: true, strict: true, allowUnionTypes: true, verbose: true }).compile(HOOK_SCHEMA),
  );
  return shapeCheck;
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// Tab, CR and LF are ordinary in a body template; other C0 controls (NUL among them) are not.
const BAD_TEMPLATE_CHAR = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;
const CONTROL = /[\u0000-\u001f\u007f]/;

export async function validateHook(
  input: unknown,
  opts: ValidateOptions = {},
  owner?: string,
): Promise<HookConfig> {
  if (input === undefined) {
    throw new HookdError('MALFORMED_JSON', 'the request body is empty; send the hook as a JSON object');
  }
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    const got = input === null ? 'null' : Array.isArray(input) ? 'an array' : `a ${typeof input}`;
    throw new HookdError('VALIDATION_FAILED', `the body must be a JSON object (a hook), not ${got}`, {
      errors: [{ field: '(body)', message: `must be a JSON object, got ${got}` }],
    });
  }
  const doc = input as Record<string, unknown>;
  const errors: FieldError[] = [];
  const shape = await checkShape();
  // Signature is checked by its own room, which names each template problem and the closest value.
  if (!shape(doc))
    errors.push(
      ...(shape.errors ?? []).filter((e) => !/^\/(Signature|Tls|Auth)/.test(e.instancePath)).map(describe),
    );
  const signature = 'Signature' in doc ? checkSignature(doc.Signature) : undefined;
  if (signature) errors.push(...signature.errors);
  const tls =
    'Tls' in doc ? checkTls(doc.Tls, typeof doc.Callback === 'string' ? doc.Callback : undefined) : undefined;
  if (tls) errors.push(...tls.errors);
  const auth = 'Auth' in doc ? checkAuth(doc.Auth) : undefined;
  if (auth) errors.push(...auth.errors);
  // The receivers' own signature headers (webhook-signature is reserved below anyway).
  const signedHeaders = new Set((signature?.config?.Schemes ?? []).map(schemeHeader));
  const bad = new Set(errors.map((e) => e.field.replace(/[[.].*$/, '')));
  const ok = (field: string) => field in doc && !bad.has(field);

  let pattern = '';
  if (ok('PathPattern')) {
    const compiled = compilePattern(doc.PathPattern as string);
    if (compiled.ok) pattern = doc.PathPattern as string;
    else errors.push({ field: 'PathPattern', message: compiled.message });
  }

  let callback: URL | undefined;
  if (ok('Callback')) {
    const text = doc.Callback as string;
    const parsed =
      /\s/.test(text) || CONTROL.test(text) ? undefined : URL.canParse(text) ? new URL(text) : undefined;
    const refusal = parsed && (opts.checkScheme ?? httpOnly)(parsed);
    if (!parsed) {
      errors.push({ field: 'Callback', message: 'must be an absolute http: or https: URL without spaces' });
    } else if (refusal !== undefined) {
      errors.push({ field: 'Callback', message: refusal });
    } else {
      callback = parsed;
    }
  }

  const type = (ok('Type') ? doc.Type : 1) as HookTypeId;
  if (type === 0) {
    for (const f of ['StatusCodeBlackList', 'StatusCodeWhiteList']) {
      if (ok(f) && (doc[f] as number[]).length > 0) {
        errors.push({
          field: f,
          message:
            'must be empty for Type 0 (BeforeCompletion): the response status is not known when it fires; use Type 1',
        });
      }
    }
  }

  let mediaType = 'application/json';
  if (ok('CallbackContentMediaType')) {
    const text = doc.CallbackContentMediaType as string;
    if (parseMediaType(text)) mediaType = text;
    else
      errors.push({
        field: 'CallbackContentMediaType',
        message: `"${printable(text)}" is not a valid media type (type/subtype, e.g. application/json)`,
      });
  }

  if (ok('CallbackContent') && BAD_TEMPLATE_CHAR.test(doc.CallbackContent as string)) {
    errors.push({
      field: 'CallbackContent',
      message: 'must not contain control characters other than tab, CR and LF',
    });
  }

  if (pattern && ok('CallbackContent')) {
    // The template's errors (a capture the pattern lacks); its warnings come with the stored hook.
    const lint = lintHook({
      PathPattern: pattern,
      Methods: [],
      Type: type,
      CallbackContent: doc.CallbackContent as string,
      CallbackContentMediaType: mediaType,
    });
    errors.push(...lint.errors);
  }

  errors.push(...(await checkCode(doc, ok, type)));

  const headers: Record<string, string> = {};
  if (ok('Headers')) {
    const seen = new Set<string>();
    for (const [name, value] of Object.entries(doc.Headers as Record<string, string>)) {
      const field = `Headers.${printable(name)}`;
      const lower = name.toLowerCase();
      const taken = callback && opts.checkHeaders?.(callback, [name]);
      if (!HEADER_NAME.test(name))
        errors.push({ field, message: 'is not a valid header name (RFC 9110 token)' });
      else if (signedHeaders.has(lower)) {
        errors.push({ field, message: 'is sent by a scheme of Signature.Schemes; leave it out of Headers' });
      } else if (HOOKD_SET_HEADERS.has(lower)) {
        errors.push({
          field,
          message:
            lower === 'content-type'
              ? 'is set from CallbackContentMediaType; set that field instead'
              : 'is set by hookd and cannot be overridden',
        });
      } else if (taken) {
        errors.push({ field, message: taken });
      } else if (seen.has(lower))
        errors.push({ field, message: 'is given twice (header names are case-insensitive)' });
      else if (CONTROL.test(value.replaceAll('\t', ''))) {
        errors.push({ field, message: 'value must not contain CR, LF, NUL or other control characters' });
      } else headers[name] = value.trim();
      seen.add(lower);
    }
  }

  if (callback && opts.checkCallback && !errors.some((e) => e.field === 'Callback')) {
    const refusal = await opts.checkCallback(callback, owner);
    if (refusal) errors.push({ field: 'Callback', message: refusal });
  }
  // A bearer token is an HTTP header: a broker's Callback has its own credentials.
  if (auth?.auth && callback && !/^https?:$/.test(callback.protocol))
    errors.push({
      field: 'Auth',
      message: `applies to http and https Callbacks only, not ${callback.protocol}`,
    });
  // The token endpoint is reached from hookd like a Callback: the same policy applies to it.
  if (auth?.auth && opts.checkCallback) {
    const refusal = await opts.checkCallback(new URL(auth.auth.OAuth2.TokenUrl), owner);
    if (refusal) errors.push({ field: 'Auth.OAuth2.TokenUrl', message: refusal });
  }

  if (errors.length > 0) {
    const n = errors.length;
    throw new HookdError(
      'VALIDATION_FAILED',
      `the hook has ${n} error${n === 1 ? '' : 's'}: ${errors.map((e) => `${e.field} ${e.message}`).join('; ')}`,
      { errors },
    );
  }

  const methods = [...new Set((doc.Methods as string[]).map((m) => m.toUpperCase()))];
  const config: HookConfig = {
    PathPattern: pattern,
    Callback: doc.Callback as string,
    Methods: methods.includes('*') ? ['*'] : methods,
    Type: type,
    StatusCodeBlackList: [...new Set((doc.StatusCodeBlackList as number[] | undefined) ?? [])],
    StatusCodeWhiteList: [...new Set((doc.StatusCodeWhiteList as number[] | undefined) ?? [])],
    CallbackMethod: ((doc.CallbackMethod as string | undefined)?.toUpperCase() ?? 'POST') as CallbackMethod,
    CallbackContentMediaType: mediaType,
    Headers: headers,
    Persist: (doc.Persist as boolean | undefined) ?? true,
  };
  if (typeof doc.Name === 'string') config.Name = doc.Name;
  if (typeof doc.CallbackContent === 'string') config.CallbackContent = doc.CallbackContent;
  if (Array.isArray(doc.RetrySchedule)) config.RetrySchedule = [...(doc.RetrySchedule as number[])];
  if (doc.RateLimit !== undefined) {
    const r = doc.RateLimit as { PerSecond: number; Burst?: number };
    config.RateLimit = { PerSecond: r.PerSecond, Burst: r.Burst ?? Math.max(1, Math.ceil(r.PerSecond)) };
  }
  if (doc.ContentEscape !== undefined && doc.ContentEscape !== 'none') {
    config.ContentEscape = doc.ContentEscape as HookConfig['ContentEscape'] & string;
  }
  if (doc.Verification !== undefined) config.Verification = doc.Verification as 'off' | 'cloudevents';
  if (doc.Ordering !== undefined) config.Ordering = { Key: (doc.Ordering as { Key: string }).Key };
  if (signature?.config) config.Signature = signature.config;
  if (tls?.tls) config.Tls = tls.tls;
  if (auth?.auth) config.Auth = auth.auth;
  if (typeof doc.Filter === 'string') config.Filter = doc.Filter;
  if (typeof doc.Transform === 'string') config.Transform = doc.Transform;
  return config;
}

/** Filter (CEL) and Transform (JavaScript): compiled now, so that a mistake is a 400 with its place. */
async function checkCode(
  doc: Record<string, unknown>,
  ok: (field: string) => boolean,
  type: HookTypeId,
): Promise<FieldError[]> {
  const errors: FieldError[] = [];
  const at = (r: { line?: number; column?: number }) =>
    r.line === undefined ? {} : { line: r.line, column: r.column ?? 1 };
  if (ok('Filter')) {
    const c = compileFilter(doc.Filter as string);
    if (!c.ok) errors.push({ field: 'Filter', message: c.message, ...at(c) });
    else if (type === 0 && c.filter.readsResponse)
      errors.push({
        field: 'Filter',
        message:
          'reads response, which a Type 0 (BeforeCompletion) hook does not have: it fires before the response exists; use Type 1',
      });
  }
  if (ok('Transform')) {
    const c = await checkTransform(doc.Transform as string);
    if (!c.ok) errors.push({ field: 'Transform', message: c.message, ...at(c) });
  }
  return errors;
}

function describe(e: ErrorObject): FieldError {
  const path = e.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'));
  let field = path.map((p, i) => (i === 0 ? p : /^\d+$/.test(p) ? `[${p}]` : `.${p}`)).join('');
  const top = path[0] ?? '';
  switch (e.keyword) {
    case 'required': {
      const missing = String(e.params.missingProperty);
      return { field: field ? `${field}.${missing}` : missing, message: 'is required' };
    }
    case 'additionalProperties': {
      const name = String(e.params.additionalProperty);
      field = field ? `${field}.${name}` : name;
      if (top === 'RateLimit') {
        const hint = suggest(name, ['PerSecond', 'Burst']);
        return {
          field: printable(field),
          message: `is not a field of RateLimit${hint ? `; did you mean \`${hint}\`?` : ' (PerSecond, Burst)'}`,
        };
      }
      const sub = SUB_FIELDS[top];
      if (sub !== undefined) {
        return { field: printable(field), message: `is not a field of ${top} (${sub.join(', ')})` };
      }
      const hint = suggest(name, KNOWN_FIELDS);
      return {
        field: printable(field),
        message: `is not a hook field${hint ? `; did you mean \`${hint}\`?` : ` (known fields: ${KNOWN_FIELDS.join(', ')})`}`,
      };
    }
    case 'type':
      return { field, message: `must be ${article(String(e.params.type))}` };
    case 'enum':
      if (top === 'Type')
        return {
          field,
          message:
            'must be 0 (BeforeCompletion) or 1 (AfterCompletion); list them with hookctl types (GET /hooktypes)',
        };
      if (top === 'CallbackMethod')
        return {
          field,
          message: `must be one of ${CALLBACK_METHODS.join(', ')}${didYouMean(e.data, CALLBACK_METHODS)}`,
        };
      return {
        field,
        message: `must be one of ${(e.params.allowedValues as unknown[]).join(', ')}${didYouMean(e.data, (e.params.allowedValues as unknown[]).map(String))}`,
      };
    case 'minItems':
      return {
        field,
        message:
          top === 'Methods'
            ? 'must list at least one method (or "*")'
            : `must have at least ${e.params.limit} items`,
      };
    case 'maxItems':
      return { field, message: `must have at most ${e.params.limit} items` };
    case 'minimum':
    case 'maximum':
      if (top === 'RateLimit') {
        return {
          field,
          message: field.endsWith('Burst')
            ? `must be a whole number of callbacks from 1 to ${MAX_RATE_BURST}`
            : `must be a number of callbacks per second from 1/86400 (one a day) to ${MAX_RATE_PER_SECOND}`,
        };
      }
      if (top === 'RetrySchedule') {
        return {
          field,
          message: `must be a number of seconds from 0 to ${MAX_RETRY_DELAY_SECONDS} (a week)`,
        };
      }
      return { field, message: 'must be an HTTP status code from 100 to 599' };
    case 'minLength':
      return { field, message: 'must not be empty' };
    case 'maxLength':
      return { field, message: `must be at most ${e.params.limit} characters` };
    case 'maxProperties':
      return { field, message: `must have at most ${e.params.limit} entries` };
    case 'pattern':
      if (top === 'Name') return { field, message: NAME_RULE };
      return {
        field,
        message:
          top === 'Methods' ? 'must be an HTTP method token such as GET, or "*"' : 'has an invalid format',
      };
    default:
      return { field, message: e.message ?? 'is invalid' };
  }
}

/** The fields of the object-valued hook fields (Signature, Ordering), named when an unknown one is given. */
const SUB_FIELDS: Record<string, readonly string[]> = { Signature: ['Schemes'], Ordering: ['Key'] };

function article(type: string): string {
  return type === 'integer' || type === 'array' || type === 'object' ? `an ${type}` : `a ${type}`;
}

/** Field names come from clients: keep control characters out of error messages and logs. */
function printable(s: string): string {
  return s
    .replace(/[\u0000-\u001f\u007f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
    .slice(0, 200);
}

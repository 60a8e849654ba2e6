/**
 * Which signatures a hook (or a notification endpoint) sends. Standard Webhooks' schemes go in
 * `webhook-signature`: `v1` (HMAC-SHA256 with the shared secret, the default) and `v1a` (ed25519;
 * receivers verify with the public key only), both at once while receivers move over. Receivers
 * that already verify another provider's format keep doing so: `github` sends
 * `X-Hub-Signature-256`, and a template (`{"Header", "Value", "Signed"}`) sends a header of the
 * receiver's own format (receiver-formats.ts).
 */
import type { FieldError } from '../errors/index.js';
import { suggest } from '../util/index.js';

/** The schemes named by a word. */
export const SIGNATURE_SCHEMES = ['v1', 'v1a', 'github'] as const;
export type NamedScheme = (typeof SIGNATURE_SCHEMES)[number];

/**
 * A receiver's own header: `Value` with `{hmac_sha256_hex}`, `{hmac_sha256_base64}`,
 * `{timestamp}`, `{id}` filled in, the HMAC-SHA256 (keyed with the secret text as
 * `GET /hooks/{id}/secret` shows it) taken over `Signed` with `{id}`, `{timestamp}` and `{body}`
 * filled in (default `{body}`).
 */
export interface TemplateScheme {
  Header: string;
  Value: string;
  Signed?: string;
}

export type SignatureScheme = NamedScheme | TemplateScheme;

/** The `Signature` field of a hook or notification endpoint. Absent: `{"Schemes": ["v1"]}`. */
export interface SignatureConfig {
  /** In the order they are sent; no repeats. */
  Schemes: SignatureScheme[];
}

export const DEFAULT_SCHEMES: readonly SignatureScheme[] = ['v1'];

/** Placeholders of a template's `Value`, and of its `Signed`. */
export const VALUE_PLACEHOLDERS = ['hmac_sha256_hex', 'hmac_sha256_base64', 'timestamp', 'id'] as const;
export const SIGNED_PLACEHOLDERS = ['id', 'timestamp', 'body'] as const;
const MAX_SCHEMES = 4;
const MAX_TEMPLATE = 1024;

/** The header `github` sends. */
export const GITHUB_HEADER = 'X-Hub-Signature-256';

const TEMPLATE_JSON_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['Header', 'Value'],
  properties: {
    Header: { type: 'string', minLength: 1, maxLength: 100 },
    Value: { type: 'string', minLength: 1, maxLength: MAX_TEMPLATE },
    Signed: { type: 'string', minLength: 1, maxLength: MAX_TEMPLATE },
  },
} as const;

/** The JSON Schema of the field (the hook schema and the notification endpoint's use it). */
export const SIGNATURE_JSON_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['Schemes'],
  properties: {
    Schemes: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_SCHEMES,
      items: { anyOf: [{ type: 'string', enum: [...SIGNATURE_SCHEMES] }, TEMPLATE_JSON_SCHEMA] },
    },
  },
  description:
    'Signatures to send: "v1" (HMAC-SHA256 in webhook-signature), "v1a" (ed25519; verify with PublicKey from GET /hooks/{id}/secret), "github" (X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>, keyed with the secret text), or {"Header", "Value", "Signed"}: a header of the receiver\'s own format. Left out: ["v1"].',
  examples: [
    { Schemes: ['v1a'] },
    { Schemes: ['v1', 'github'] },
    {
      Schemes: [
        {
          Header: 'Stripe-Signature',
          Value: 't={timestamp},v1={hmac_sha256_hex}',
          Signed: '{timestamp}.{body}',
        },
      ],
    },
  ],
} as const;

/**
 * Headers hookd sets itself or that frame the request: no hook may set them in `Headers`, and no
 * signature scheme may name them.
 */
export const HOOKD_SET_HEADERS: ReadonlySet<string> = new Set([
  'host',
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'proxy-connection',
  'expect',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
  // hookd's loop marks (src/loops/): a hook setting them could only confuse the count.
  'hookd-loop',
  'cdn-loop',
]);

/** Headers a template may not name: the above, and the two hookd sends unless a hook sets them. */
const RESERVED = new Set([...HOOKD_SET_HEADERS, 'user-agent', 'traceparent']);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// Visible ASCII, space and tab: what a header value may hold on every receiver's stack.
const HEADER_TEXT = /^[\t\x20-\x7e]*$/;

/** The header a scheme sends, lower-cased (`webhook-signature` for v1 and v1a). */
export function schemeHeader(s: SignatureScheme): string {
  if (typeof s !== 'string') return s.Header.toLowerCase();
  return s === 'github' ? GITHUB_HEADER.toLowerCase() : 'webhook-signature';
}

/** How a scheme is shown in one word (the console, logs). */
export function schemeLabel(s: SignatureScheme): string {
  return typeof s === 'string' ? s : `template:${s.Header}`;
}

/** The problems of a template's `Value` or `Signed` text. */
function checkTemplate(
  text: string,
  field: string,
  allowed: readonly string[],
  needs: readonly string[],
): FieldError[] {
  if (!HEADER_TEXT.test(text)) {
    return [
      {
        field,
        message: 'must hold visible ASCII characters, spaces and tabs only (no CR, LF or other controls)',
      },
    ];
  }
  for (const m of text.matchAll(/\{([^{}]*)\}/g)) {
    const name = m[1]!;
    if (!allowed.includes(name)) {
      // `{hmac_sha256}` is too far from `{hmac_sha256_hex}` for the edit distance: a prefix counts too.
      const hint =
        suggest(name, allowed) ?? (name.length >= 3 ? allowed.find((a) => a.startsWith(name)) : undefined);
      return [
        {
          field,
          message: `{${name.slice(0, 40)}} is not a placeholder here (${allowed.map((a) => `{${a}}`).join(', ')})${hint ? `; did you mean {${hint}}?` : ''}`,
        },
      ];
    }
  }
  if (!needs.some((n) => text.includes(`{${n}}`))) {
    return [{ field, message: `must contain ${needs.map((n) => `{${n}}`).join(' or ')}` }];
  }
  return [];
}

/** One entry of `Schemes`: its problems, or the scheme. */
function checkScheme(v: unknown, field: string): { scheme?: SignatureScheme; errors: FieldError[] } {
  if (typeof v === 'string') {
    if ((SIGNATURE_SCHEMES as readonly string[]).includes(v)) return { scheme: v as NamedScheme, errors: [] };
    const hint = suggest(v, SIGNATURE_SCHEMES);
    return {
      errors: [
        {
          field,
          message: `"${v.slice(0, 40)}" is not a signature scheme (v1, v1a, github, or {"Header", "Value", "Signed"})${hint ? `; did you mean "${hint}"?` : ''}`,
        },
      ],
    };
  }
  const rule = 'must be "v1", "v1a", "github" or a template {"Header", "Value", "Signed"}';
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return { errors: [{ field, message: rule }] };
  const t = v as Record<string, unknown>;
  const extra = Object.keys(t).find((k) => !['Header', 'Value', 'Signed'].includes(k));
  if (extra !== undefined) {
    const hint = suggest(extra, ['Header', 'Value', 'Signed']);
    return {
      errors: [
        {
          field: `${field}.${extra.slice(0, 40)}`,
          message: `is not a field of a signature template (Header, Value, Signed)${hint ? `; did you mean \`${hint}\`?` : ''}`,
        },
      ],
    };
  }
  const errors: FieldError[] = [];
  const header = t.Header;
  if (typeof header !== 'string' || !HEADER_NAME.test(header) || header.length > 100) {
    errors.push({
      field: `${field}.Header`,
      message: 'must be a header name (an RFC 9110 token, e.g. X-Signature)',
    });
  } else if (RESERVED.has(header.toLowerCase())) {
    errors.push({
      field: `${field}.Header`,
      message: `"${header}" is set by hookd; name a header of the receiver's own`,
    });
  }
  if (typeof t.Value !== 'string' || t.Value.length === 0 || t.Value.length > MAX_TEMPLATE) {
    errors.push({
      field: `${field}.Value`,
      message: `must be a text of 1 to ${MAX_TEMPLATE} characters, e.g. "sha256={hmac_sha256_hex}"`,
    });
  } else {
    errors.push(
      ...checkTemplate(t.Value, `${field}.Value`, VALUE_PLACEHOLDERS, [
        'hmac_sha256_hex',
        'hmac_sha256_base64',
      ]),
    );
  }
  if (t.Signed !== undefined) {
    if (typeof t.Signed !== 'string' || t.Signed.length === 0 || t.Signed.length > MAX_TEMPLATE) {
      errors.push({
        field: `${field}.Signed`,
        message: `must be a text of 1 to ${MAX_TEMPLATE} characters, e.g. "{timestamp}.{body}"`,
      });
    } else {
      errors.push(...checkTemplate(t.Signed, `${field}.Signed`, SIGNED_PLACEHOLDERS, ['body']));
    }
  }
  if (errors.length > 0) return { errors };
  const scheme: TemplateScheme = { Header: header as string, Value: t.Value as string };
  if (t.Signed !== undefined) scheme.Signed = t.Signed as string;
  return { scheme, errors };
}

/** Checks a `Signature` value by hand: every problem named by its field, with the closest valid value. */
export function checkSignature(
  value: unknown,
  field = 'Signature',
): { config?: SignatureConfig; errors: FieldError[] } {
  const rule = `must be {"Schemes": [...]} listing 1 to ${MAX_SCHEMES} of "v1", "v1a", "github" and templates {"Header", "Value", "Signed"}`;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { errors: [{ field, message: rule }] };
  }
  const v = value as Record<string, unknown>;
  const extra = Object.keys(v).find((k) => k !== 'Schemes');
  if (extra !== undefined) {
    const hint = suggest(extra, ['Schemes']);
    return {
      errors: [
        {
          field: `${field}.${extra.slice(0, 40)}`,
          message: `is not a field of Signature (Schemes)${hint ? `; did you mean \`${hint}\`?` : ''}`,
        },
      ],
    };
  }
  const s = v.Schemes;
  if (!Array.isArray(s) || s.length === 0 || s.length > MAX_SCHEMES) {
    return { errors: [{ field: `${field}.Schemes`, message: rule }] };
  }
  const errors: FieldError[] = [];
  const schemes: SignatureScheme[] = [];
  const headers = new Map<string, string>();
  s.forEach((entry, i) => {
    const at = `${field}.Schemes[${i}]`;
    const r = checkScheme(entry, at);
    errors.push(...r.errors);
    if (r.scheme === undefined) return;
    const same = schemes.findIndex((x) => JSON.stringify(x) === JSON.stringify(r.scheme));
    const h = schemeHeader(r.scheme);
    // v1 and v1a share webhook-signature (a list); every other header carries one signature.
    if (same >= 0) errors.push({ field: at, message: `repeats Schemes[${same}]` });
    else if (h !== 'webhook-signature' && headers.has(h)) {
      errors.push({ field: at, message: `sends ${h}, which ${headers.get(h)} sends too` });
    } else headers.set(h, `Schemes[${i}]`);
    schemes.push(r.scheme);
  });
  return errors.length > 0 ? { errors } : { config: { Schemes: schemes }, errors };
}

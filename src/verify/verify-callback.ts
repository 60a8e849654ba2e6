import { createHmac, verify as ed25519Verify, timingSafeEqual } from 'node:crypto';
import { type CallbackHeaders, headerOf } from './headers.js';
import { keyOf, type VerifyKey } from './keys.js';

/** A receiver-format template as the hook holds it in `Signature.Schemes`. */
export interface TemplateScheme {
  Header: string;
  Value: string;
  Signed?: string;
}

/** `standard`: Standard Webhooks v1 and v1a; `github`: X-Hub-Signature-256; or a hook's template. */
export type VerifyScheme = 'standard' | 'github' | TemplateScheme;

export interface VerifyOptions {
  /** The raw body exactly as received: the text, or its bytes. */
  body: string | Uint8Array;
  /** The callback's headers, AMQP headers, MQTT user properties, NATS headers or Redis fields. */
  headers: CallbackHeaders;
  /** `whsec_…` (v1, github, templates, and v1a), `whpk_…` (v1a only), or several: any may verify. */
  secret: string | readonly string[];
  /** Default: `standard` when `webhook-signature` is there, else `github` when `x-hub-signature-256` is. */
  scheme?: VerifyScheme;
  /** How far `webhook-timestamp` may be from now; default 300. */
  toleranceSeconds?: number;
  /** The time to check against; default now. */
  now?: Date;
}

export type VerifyResult = { ok: true; id: string; timestamp: Date } | { ok: false; reason: string };

const DEFAULT_TOLERANCE_S = 300;

/**
 * Checks that a callback was signed by hookd with one of `secret` and is recent: the signature
 * compared in constant time, the timestamp within the tolerance either way. Never throws for a
 * callback's content; a malformed `secret` or `scheme` (the caller's own) is a TypeError.
 */
export function verifyCallback(opts: VerifyOptions): VerifyResult {
  const secrets = typeof opts.secret === 'string' ? [opts.secret] : [...opts.secret];
  if (secrets.length === 0) throw new TypeError('secret: give at least one whsec_… or whpk_… text');
  const keys = secrets.map(keyOf);
  const body = typeof opts.body === 'string' ? Buffer.from(opts.body) : Buffer.from(opts.body);
  const scheme = opts.scheme ?? defaultScheme(opts.headers);
  if (scheme === undefined) {
    return { ok: false, reason: 'no webhook-signature or x-hub-signature-256 header: give the scheme' };
  }
  const tolerance = opts.toleranceSeconds ?? DEFAULT_TOLERANCE_S;
  const now = (opts.now ?? new Date()).getTime();
  if (scheme === 'standard') return standard(opts.headers, body, keys, tolerance, now);
  if (scheme === 'github') return github(opts.headers, body, keys, tolerance, now);
  if (typeof scheme === 'object' && typeof scheme.Header === 'string' && typeof scheme.Value === 'string') {
    return template(scheme, opts.headers, body, keys, tolerance, now);
  }
  throw new TypeError('scheme: must be "standard", "github" or a template {Header, Value, Signed?}');
}

function defaultScheme(headers: CallbackHeaders): VerifyScheme | undefined {
  if (headerOf(headers, 'webhook-signature') !== undefined) return 'standard';
  if (headerOf(headers, 'x-hub-signature-256') !== undefined) return 'github';
  return undefined;
}

/** `webhook-id` and a `webhook-timestamp` within the tolerance; else why not. */
function idAndTime(
  headers: CallbackHeaders,
  tolerance: number,
  now: number,
  timestamp = headerOf(headers, 'webhook-timestamp'),
  id = headerOf(headers, 'webhook-id'),
): { id: string; ts: string; date: Date } | { reason: string } {
  if (id === undefined || id === '') return { reason: 'no webhook-id header' };
  if (timestamp === undefined) return { reason: 'no webhook-timestamp header' };
  if (!/^\d{1,12}$/.test(timestamp)) return { reason: 'webhook-timestamp is not unix seconds' };
  const seconds = Number(timestamp);
  if (Math.abs(now / 1000 - seconds) > tolerance) {
    return { reason: `the timestamp is more than ${tolerance} s from now (a replay, or a clock off)` };
  }
  return { id, ts: timestamp, date: new Date(seconds * 1000) };
}

function standard(
  headers: CallbackHeaders,
  body: Buffer,
  keys: VerifyKey[],
  tolerance: number,
  now: number,
): VerifyResult {
  const header = headerOf(headers, 'webhook-signature');
  if (header === undefined || header.trim() === '')
    return { ok: false, reason: 'no webhook-signature header' };
  const t = idAndTime(headers, tolerance, now);
  if ('reason' in t) return { ok: false, reason: t.reason };
  const content = Buffer.concat([Buffer.from(`${t.id}.${t.ts}.`), body]);
  const v1: Buffer[] = [];
  const v1a: Buffer[] = [];
  for (const part of header.trim().split(/\s+/)) {
    const comma = part.indexOf(',');
    const version = part.slice(0, comma);
    const sig = Buffer.from(part.slice(comma + 1), 'base64');
    if (version === 'v1') v1.push(sig);
    else if (version === 'v1a') v1a.push(sig);
  }
  if (v1.length === 0 && v1a.length === 0) {
    return { ok: false, reason: 'webhook-signature holds no v1 or v1a signature' };
  }
  for (const k of keys) {
    if (k.hmac !== undefined && v1.length > 0) {
      const mac = createHmac('sha256', k.hmac).update(content).digest();
      if (v1.some((s) => same(s, mac))) return { ok: true, id: t.id, timestamp: t.date };
    }
    for (const s of v1a) {
      if (s.length === 64 && ed25519Verify(null, content, k.ed25519, s)) {
        return { ok: true, id: t.id, timestamp: t.date };
      }
    }
  }
  return { ok: false, reason: 'no signature matches the secret (a changed body, or another secret)' };
}

function github(
  headers: CallbackHeaders,
  body: Buffer,
  keys: VerifyKey[],
  tolerance: number,
  now: number,
): VerifyResult {
  const header = headerOf(headers, 'x-hub-signature-256');
  const m = header === undefined ? null : /^sha256=([0-9a-f]{64})$/i.exec(header.trim());
  if (m === null) return { ok: false, reason: 'no x-hub-signature-256 header of the form sha256=<hex>' };
  const t = idAndTime(headers, tolerance, now);
  if ('reason' in t) return { ok: false, reason: t.reason };
  const sig = Buffer.from(m[1]!, 'hex');
  for (const k of keys) {
    if (k.text !== undefined && same(sig, createHmac('sha256', k.text).update(body).digest())) {
      return { ok: true, id: t.id, timestamp: t.date };
    }
  }
  return { ok: false, reason: 'the signature does not match the secret (a changed body, or another secret)' };
}

// Each placeholder of a template's Value, as the named group that reads it back.
const VALUE_GROUPS: Record<string, [group: string, pattern: string]> = {
  hmac_sha256_hex: ['hex', '[0-9a-fA-F]{64}'],
  hmac_sha256_base64: ['b64', '[A-Za-z0-9+/]{43}='],
  timestamp: ['timestamp', '\\d{1,12}'],
  id: ['id', '[^\\s,;]+?'],
};
const patterns = new Map<string, RegExp>();

/** The template's Value as a pattern that reads the MAC (and the timestamp and id it holds) back. */
function valuePattern(value: string): RegExp {
  let re = patterns.get(value);
  if (re === undefined) {
    const seen = new Set<string>();
    const source = value
      .split(/(\{[a-z0-9_]+\})/)
      .map((piece) => {
        const known = VALUE_GROUPS[/^\{([a-z0-9_]+)\}$/.exec(piece)?.[1] ?? ''];
        if (known === undefined) return piece.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        const [group, pattern] = known;
        if (seen.has(group)) return `\\k<${group}>`;
        seen.add(group);
        return `(?<${group}>${pattern})`;
      })
      .join('');
    re = new RegExp(`^${source}$`);
    if (patterns.size > 64) patterns.clear();
    patterns.set(value, re);
  }
  return re;
}

function template(
  scheme: TemplateScheme,
  headers: CallbackHeaders,
  body: Buffer,
  keys: VerifyKey[],
  tolerance: number,
  now: number,
): VerifyResult {
  const header = headerOf(headers, scheme.Header);
  if (header === undefined) return { ok: false, reason: `no ${scheme.Header} header` };
  const m = valuePattern(scheme.Value).exec(header.trim());
  if (m === null) return { ok: false, reason: `${scheme.Header} is not of the form ${scheme.Value}` };
  const g = m.groups ?? {};
  // A timestamp or id the header carries itself is the one signed; else hookd's own headers'.
  const t = idAndTime(headers, tolerance, now, g.timestamp, g.id);
  if ('reason' in t) return { ok: false, reason: t.reason };
  const signed = (scheme.Signed ?? '{body}').split(/(\{(?:id|timestamp|body)\})/);
  const parts = signed.map((p) =>
    p === '{body}' ? body : Buffer.from(p === '{id}' ? t.id : p === '{timestamp}' ? t.ts : p),
  );
  const sig = g.hex !== undefined ? Buffer.from(g.hex, 'hex') : Buffer.from(g.b64 ?? '', 'base64');
  for (const k of keys) {
    if (k.text === undefined) continue;
    const mac = createHmac('sha256', k.text);
    for (const p of parts) mac.update(p);
    if (same(sig, mac.digest())) return { ok: true, id: t.id, timestamp: t.date };
  }
  return { ok: false, reason: 'the signature does not match the secret (a changed body, or another secret)' };
}

/** Constant-time equality of two MACs (lengths are public: a length mismatch is no match). */
function same(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

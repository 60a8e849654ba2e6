/**
 * `CallbackContent` templates (SPEC §5). A template is compiled once per hook, when it is
 * created or replaced, into literal chunks and variable slots; rendering per firing is then a
 * join. Each slot carries the escaping that its media type and position demand, so that no
 * request path can change the structure of the callback body.
 */
import { Buffer } from 'node:buffer';
import { type ContentEscape, contentEscapeOf } from './content-escape.js';
import { HOOK_TYPES } from './hook.js';
import { type MediaKind, mediaKind, parseMediaType } from './media-type.js';

/** The values a template can refer to, for one firing of one hook. */
export interface TemplateContext {
  /** `$REQUEST_PATH`: the path as received, without the query string. */
  requestPath: string;
  /** `$REQUEST_URI`: the absolute URI as the client used it (scheme, host, path, query). */
  requestUri: string;
  /** `$REQUEST_METHOD`. */
  requestMethod: string;
  /**
   * `$REQUEST_USER`: the user who made the request, as the identity provider told (or a
   * report's `User`); undefined or empty for an anonymous request, rendered as the empty string.
   */
  requestUser?: string | undefined;
  /** `$STATUS_CODE`: undefined for BeforeCompletion, rendered as the empty string. */
  statusCode: number | undefined;
  /** `$HOOK_ID`. */
  hookId: string;
  hookType: 0 | 1;
  /** `$TIMESTAMP`: the firing time, ISO 8601 UTC. */
  timestamp: string;
  /** `$1`…`$n`: the PathPattern captures, already percent-decoded. */
  captures: readonly string[];
}

/** A template ready to render; cheap to call once per firing. */
export interface CompiledTemplate {
  /** Throws {@link TemplateSizeError} when the body would exceed the size limit. */
  render(ctx: TemplateContext): string;
}

/** Default limit of a rendered callback body, in UTF-8 bytes (256 KiB). */
export const DEFAULT_MAX_BODY_BYTES = 262144;

/** A rendered body (or a template's fixed text alone) is larger than the limit. */
export class TemplateSizeError extends Error {
  override readonly name = 'TemplateSizeError';
  constructor(
    /** Size in UTF-8 bytes; for a template at compile time, of its fixed text alone. */
    readonly bytes: number,
    readonly limit: number,
  ) {
    super(`callback body is ${bytes} bytes, over the limit of ${limit} bytes`);
  }
}

/** The named template variables (captures `$1`…`$n` come in addition), for docs and validation. */
export const TEMPLATE_VARIABLES: readonly string[] = Object.freeze([
  '$REQUEST_PATH',
  '$REQUEST_URI',
  '$REQUEST_METHOD',
  '$REQUEST_USER',
  '$STATUS_CODE',
  '$HOOK_ID',
  '$TIMESTAMP',
]);

// A Map, not an object literal: `$constructor` or `$__proto__` must not find inherited members.
export const GETTERS = new Map<string, (ctx: TemplateContext) => string>([
  ['REQUEST_PATH', (c) => c.requestPath],
  ['REQUEST_URI', (c) => c.requestUri],
  ['REQUEST_METHOD', (c) => c.requestMethod],
  ['REQUEST_USER', (c) => c.requestUser ?? ''],
  ['STATUS_CODE', (c) => (c.statusCode === undefined ? '' : String(c.statusCode))],
  ['HOOK_ID', (c) => c.hookId],
  ['TIMESTAMP', (c) => c.timestamp],
]);

type Escape = (value: string) => string;

const identity: Escape = (v) => v;

// Lone surrogates: JSON.stringify escapes them, XML cannot carry them, encodeURIComponent throws.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

const JSON_NEEDS_ESCAPE = /["\\\u0000-\u001f\u2028\u2029\ud800-\udfff]/;
const LINE_SEPARATORS = /[\u2028\u2029]/g;
/** JSON string content; U+2028/U+2029 are escaped too, for receivers that embed it in JavaScript. */
const jsonStringEscape: Escape = (v) => {
  if (!JSON_NEEDS_ESCAPE.test(v)) return v;
  return JSON.stringify(v)
    .slice(1, -1)
    .replace(LINE_SEPARATORS, (c) => (c === '\u2028' ? '\\u2028' : '\\u2029'));
};

const XML_NEEDS_ESCAPE = /[&<>"'\u0000-\u001f\ud800-\udfff\ufffe\uffff]/;
const XML_ESCAPES = /[&<>"'\t\n\r]|[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g;
const XML_ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&apos;',
  // Character references keep tab, LF and CR exact: a parser normalises them when literal
  // (CR to LF everywhere, all three to spaces in attribute values), and we do not know which
  // context the variable sits in.
  '\t': '&#x9;',
  '\n': '&#xA;',
  '\r': '&#xD;',
};
/**
 * XML text/attribute content. Characters XML 1.0 cannot carry even as references (most C0
 * controls, U+FFFE/U+FFFF, lone surrogates) become U+FFFD so the document stays well-formed.
 */
const xmlEscape: Escape = (v) => {
  if (!XML_NEEDS_ESCAPE.test(v)) return v;
  return v.replace(LONE_SURROGATE, '\ufffd').replace(XML_ESCAPES, (c) => XML_ENTITIES[c] ?? '\ufffd');
};

const formEscape: Escape = (v) => {
  try {
    return encodeURIComponent(v);
  } catch {
    return encodeURIComponent(v.replace(LONE_SURROGATE, '\ufffd'));
  }
};

/** The chat escape first (it reads the value as the person will), then the media type's. */
function escapeFor(kind: MediaKind, inJsonString: boolean, chat: Escape | undefined): Escape {
  const media = mediaEscapeFor(kind, inJsonString);
  if (chat === undefined) return media;
  return media === identity ? chat : (v) => media(chat(v));
}

function mediaEscapeFor(kind: MediaKind, inJsonString: boolean): Escape {
  switch (kind) {
    case 'json':
      // Outside a string literal the value goes in as-is: the seed's bare `$REQUEST_PATH`
      // template sends the bare path, and `{"status": $STATUS_CODE}` a number.
      return inJsonString ? jsonStringEscape : identity;
    case 'xml':
      return xmlEscape;
    case 'form':
      return formEscape;
    case 'text':
      return identity;
  }
}

interface Slot {
  /** undefined: no such capture, so `raw` goes out unchanged. */
  get: (ctx: TemplateContext) => string | undefined;
  esc: Escape;
  /** The reference as written in the template, e.g. `$7` or `${7}`. */
  raw: string;
}

const isWordStart = (c: number): boolean =>
  (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f; // A-Z a-z _
const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
const isWordChar = (c: number): boolean => isWordStart(c) || isDigit(c);

export interface Reference {
  /** A word (`REQUEST_PATH`, `schema`) or a digit string (`12`). */
  name: string;
  end: number;
}

/** Reads `$word`, `$digits`, `${word}` or `${digits}` starting at the `$` at index `i`. */
export function readReference(t: string, i: number): Reference | null {
  const braced = t.charCodeAt(i + 1) === 0x7b; // {
  const start = braced ? i + 2 : i + 1;
  const first = t.charCodeAt(start);
  let j = start;
  if (isDigit(first)) {
    while (isDigit(t.charCodeAt(j))) j++;
  } else if (isWordStart(first)) {
    while (isWordChar(t.charCodeAt(j))) j++;
  } else {
    return null;
  }
  const name = t.slice(start, j);
  if (!braced) return { name, end: j };
  return t.charCodeAt(j) === 0x7d ? { name, end: j + 1 } : null; // }
}

function slotFor(name: string, raw: string, esc: Escape): Slot | null {
  const named = GETTERS.get(name);
  if (named !== undefined) return { get: named, esc, raw };
  if (!isDigit(name.charCodeAt(0))) return null;
  // All the digits make the number: `$12` is capture 12 (write `${1}2` for capture 1 then "2").
  // `$0` and numbers past the last capture find no capture and render as written.
  const index = Number(name) - 1;
  return { get: (c) => c.captures[index], esc, raw };
}

function utf8Length(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

function checkSize(body: string, maxBytes: number): string {
  // A UTF-16 code unit never takes more than 3 UTF-8 bytes, so short bodies need no counting.
  if (body.length * 3 <= maxBytes) return body;
  const bytes = utf8Length(body);
  if (bytes > maxBytes) throw new TemplateSizeError(bytes, maxBytes);
  return body;
}

/**
 * The body sent when `CallbackContent` is absent: always JSON, whatever the media type.
 * `statusCode` is left out when unknown (BeforeCompletion), `request.user` when the request was
 * anonymous.
 */
export function defaultEventDocument(ctx: TemplateContext): string {
  return JSON.stringify({
    event: 'hook.fired',
    hookId: ctx.hookId,
    hookType: ctx.hookType,
    hookTypeName: HOOK_TYPES[ctx.hookType].Name,
    request: {
      method: ctx.requestMethod,
      path: ctx.requestPath,
      uri: ctx.requestUri,
      ...(ctx.requestUser ? { user: ctx.requestUser } : {}),
    },
    ...(ctx.statusCode === undefined ? {} : { statusCode: ctx.statusCode }),
    captures: [...ctx.captures],
    timestamp: ctx.timestamp,
  });
}

/**
 * Compiles a `CallbackContent` template for a media type; `undefined` selects the default JSON
 * event document. Compile once per hook (at create/replace) and render per firing.
 *
 * Unknown `$words` (`$schema`), references to captures the pattern does not have, and `$$` are
 * kept exactly as written. Throws `TypeError` for an invalid media type, `RangeError` for a bad
 * `maxBytes`, and {@link TemplateSizeError} when the template's fixed text alone is over the
 * limit (every render would fail). `escape` (the hook's `ContentEscape`) applies to every
 * substituted value, before the media type's escaping; the default event document has none.
 */
export function compileTemplate(
  template: string | undefined,
  mediaType: string,
  opts: { maxBytes?: number; escape?: ContentEscape | undefined } = {},
): CompiledTemplate {
  const maxBytes = opts.maxBytes ?? DEFAULT_MAX_BODY_BYTES;
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) {
    throw new RangeError(`maxBytes must be a non-negative integer, got ${maxBytes}`);
  }
  const mt = parseMediaType(mediaType);
  if (mt === null) throw new TypeError(`invalid media type: ${JSON.stringify(mediaType)}`);
  if (template === undefined) {
    return { render: (ctx) => checkSize(defaultEventDocument(ctx), maxBytes) };
  }

  const kind = mediaKind(mt);
  const chat = contentEscapeOf(opts.escape);
  const json = kind === 'json';
  const literals: string[] = [];
  const slots: Slot[] = [];
  let literalStart = 0;
  let inString = false;
  let i = 0;
  while (i < template.length) {
    const c = template.charCodeAt(i);
    if (json) {
      // Only string boundaries matter; the template need not be valid JSON otherwise.
      if (inString && c === 0x5c) {
        i += 2;
        continue;
      }
      if (c === 0x22) {
        inString = !inString;
        i++;
        continue;
      }
    }
    if (c === 0x24) {
      const ref = readReference(template, i);
      const slot = ref && slotFor(ref.name, template.slice(i, ref.end), escapeFor(kind, inString, chat));
      if (ref && slot) {
        literals.push(template.slice(literalStart, i));
        slots.push(slot);
        i = literalStart = ref.end;
        continue;
      }
    }
    i++;
  }
  literals.push(template.slice(literalStart));

  const fixedBytes = literals.reduce((sum, l) => sum + utf8Length(l), 0);
  if (fixedBytes > maxBytes) throw new TemplateSizeError(fixedBytes, maxBytes);

  if (slots.length === 0) {
    const body = literals[0]!;
    return { render: () => body };
  }
  const head = literals[0]!;
  return {
    render(ctx) {
      let out = head;
      for (let k = 0; k < slots.length; k++) {
        const slot = slots[k]!;
        const value = slot.get(ctx);
        out += (value === undefined ? slot.raw : slot.esc(value)) + literals[k + 1]!;
      }
      return checkSize(out, maxBytes);
    },
  };
}

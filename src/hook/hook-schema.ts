import { TLS_JSON_SCHEMA } from '../client-tls/index.js';
import { AUTH_JSON_SCHEMA } from '../oauth2/index.js';
import { SIGNATURE_JSON_SCHEMA } from '../signing/index.js';
import { CONTENT_ESCAPES } from './content-escape.js';
import { CALLBACK_METHODS, HOOK_TYPES } from './hook.js';
import { NAME_SHAPE } from './hook-name.js';

/** At most this many attempts per round, and no delay longer than a week. */
export const MAX_RETRY_ATTEMPTS = 20;
export const MAX_RETRY_DELAY_SECONDS = 7 * 24 * 3600;
/** Bounds of `RateLimit.PerSecond` (one callback a day to 10,000 a second) and `RateLimit.Burst`. */
export const MIN_RATE_PER_SECOND = 1 / 86400;
export const MAX_RATE_PER_SECOND = 10_000;
export const MAX_RATE_BURST = 10_000;

const statusList = {
  type: 'array',
  maxItems: 500,
  uniqueItems: false,
  items: { type: 'integer', minimum: 100, maximum: 599 },
  default: [],
} as const;

/**
 * JSON Schema (draft-07) of a hook as a client sends it. It is the structural half of validation
 * (types, required fields, unknown fields); the rules that need code (pattern syntax, URL and
 * callback-target policy, media type, headers) live in validate-hook.ts. `npm run build` writes it
 * to schema/hook.schema.json, which ships in the package for editors (`"$schema": …` in hook.json).
 */
export const HOOK_SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  $id: 'https://hookd.dev/schema/hook.schema.json',
  title: 'hookd hook',
  description: 'A webhook rule: which requests trigger it and the callback it sends.',
  type: 'object',
  additionalProperties: false,
  required: ['PathPattern', 'Callback', 'Methods'],
  properties: {
    $schema: { type: 'string', description: 'Editor hint; ignored by hookd.' },
    PathPattern: {
      type: 'string',
      minLength: 1,
      maxLength: 2048,
      description:
        'Path segments separated by /. `*` matches one segment, `(*)` matches and captures it ($1, $2, …), a final `$` anchors the end; otherwise further segments may follow.',
      examples: ['/repositories/*/timeseries/(*)'],
    },
    Callback: { type: 'string', minLength: 1, maxLength: 2048, description: 'Absolute http: or https: URL.' },
    Methods: {
      type: 'array',
      minItems: 1,
      maxItems: 32,
      items: { type: 'string', minLength: 1, maxLength: 32, pattern: "^(\\*|[!#$%&'*+.^_`|~0-9A-Za-z-]+)$" },
      description: 'HTTP methods of triggering requests; "*" means any.',
    },
    Type: {
      type: 'integer',
      enum: HOOK_TYPES.map((t) => t.Type),
      default: 1,
      description: '0 BeforeCompletion, 1 AfterCompletion (GET /hooktypes).',
    },
    StatusCodeBlackList: { ...statusList, description: 'Type 1 only: never fire for these statuses.' },
    StatusCodeWhiteList: { ...statusList, description: 'Type 1 only: if non-empty, fire only for these.' },
    CallbackMethod: {
      type: 'string',
      enum: [...CALLBACK_METHODS, ...CALLBACK_METHODS.map((m) => m.toLowerCase())],
      default: 'POST',
    },
    CallbackContent: {
      type: 'string',
      maxLength: 65536,
      description:
        'Body template: $REQUEST_PATH, $REQUEST_URI, $REQUEST_METHOD, $REQUEST_USER, $STATUS_CODE, $HOOK_ID, $TIMESTAMP, $1…$n (also ${NAME}). Left out: a JSON event document.',
    },
    ContentEscape: {
      type: 'string',
      enum: [...CONTENT_ESCAPES],
      default: 'none',
      description:
        "Chat markup escaping of every value substituted into CallbackContent, on top of the media type's: slack (& < > as &amp; &lt; &gt;), mattermost (those, Markdown punctuation backslashed, @ mentions broken), discord and markdown (Markdown punctuation backslashed; discord also breaks @ mentions), none.",
    },
    CallbackContentMediaType: { type: 'string', minLength: 1, maxLength: 255, default: 'application/json' },
    Headers: {
      type: 'object',
      maxProperties: 64,
      additionalProperties: { type: 'string', maxLength: 8192 },
      default: {},
    },
    Persist: { type: 'boolean', default: true },
    RetrySchedule: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_RETRY_ATTEMPTS,
      items: { type: 'number', minimum: 0, maximum: MAX_RETRY_DELAY_SECONDS },
      description:
        "Seconds before each attempt: [0] before the first, [i] after the i-th failure; the last failure makes the delivery failed. Left out: the daemon's schedule (0, 5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400).",
    },
    RateLimit: {
      type: 'object',
      additionalProperties: false,
      required: ['PerSecond'],
      properties: {
        PerSecond: { type: 'number', minimum: MIN_RATE_PER_SECOND, maximum: MAX_RATE_PER_SECOND },
        Burst: { type: 'integer', minimum: 1, maximum: MAX_RATE_BURST },
      },
      description:
        'At most PerSecond callbacks a second (fractions allowed, e.g. 0.5), with bursts of up to Burst (default ceil(PerSecond)). Callbacks over the rate wait; none is dropped.',
      examples: [{ PerSecond: 10, Burst: 10 }],
    },
    Name: {
      type: 'string',
      pattern: NAME_SHAPE.source,
      description:
        "Optional label, unique among the owner's hooks: 1-63 of a-z 0-9 . _ - starting with a letter or digit. Usable wherever an Id is; hookctl apply keys files by it.",
      examples: ['orders-created'],
    },
    Signature: SIGNATURE_JSON_SCHEMA,
    Tls: TLS_JSON_SCHEMA,
    Auth: AUTH_JSON_SCHEMA,
    Ordering: {
      type: 'object',
      additionalProperties: false,
      required: ['Key'],
      properties: { Key: { type: 'string', minLength: 1, maxLength: 256 } },
      description:
        'Ordered delivery per key: callbacks whose rendered Key is equal go one at a time, in trigger order; a failing one holds the rest of its key until it succeeds or fails for good. Key is a template like CallbackContent ($1…$n, $REQUEST_PATH, $REQUEST_METHOD, $REQUEST_USER); a constant orders all of the hook. Left out: concurrent delivery.',
      examples: [{ Key: '$1' }],
    },
    Verification: {
      type: 'string',
      enum: ['off', 'cloudevents'],
      description:
        "Endpoint verification: cloudevents performs the CloudEvents validation handshake (OPTIONS with WebHook-Request-Origin) before the callback origin's first delivery; until it succeeds the hook is State unverified and its deliveries wait. Left out: the daemon's --callback-verification (default off).",
    },
    Filter: {
      type: 'string',
      maxLength: 4096,
      description:
        'A CEL expression that must be true for the hook to fire, judged after PathPattern, Methods and the status lists. Reads request.method, .path, .uri, .query, .queryAll, .headers, .user, .body, .bodyTruncated, captures, and for Type 1 response.status, .headers, .body. An evaluation error is no match, shown as LastFilterError.',
      examples: ['request.body.quality == "bad" && request.query.unit == "kWh"'],
    },
    Transform: {
      type: 'string',
      maxLength: 65536,
      description:
        'JavaScript, function transform(event) { … }, run in a WebAssembly sandbox once per delivery: event has request, response, captures, hook, payload and callback; the returned object may set payload, headers (merged) or skip: true.',
      examples: [
        'function transform(event) {\n  return { payload: { text: "bad reading at " + event.request.path } };\n}',
      ],
    },
    Id: { description: 'Server-set; ignored in input.' },
    Owner: { description: 'Server-set; ignored in input.' },
    Modified: { description: 'Server-set; ignored in input.' },
    State: { description: 'Server-set; ignored in input.' },
    DisabledReason: { description: 'Server-set; ignored in input.' },
    DisabledAt: { description: 'Server-set; ignored in input.' },
    VerificationResult: { description: 'Server-set; ignored in input.' },
    LastFilterError: { description: 'Server-set; ignored in input.' },
    Warnings: { description: 'Server-set (create/replace answers); ignored in input.' },
  },
} as const;

export const KNOWN_FIELDS: readonly string[] = Object.keys(HOOK_SCHEMA.properties).filter(
  (k) => k !== '$schema',
);

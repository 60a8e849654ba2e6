/**
 * The hook resource (SPEC §2). Field names are the seed's, case-sensitive, and are the same in
 * input, output and storage so that `get` output can be edited and sent back with `replace`.
 */
import type { ClientTls } from '../client-tls/index.js';
import type { HookAuth } from '../oauth2/index.js';
import type { SignatureConfig } from '../signing/index.js';
import type { ContentEscape } from './content-escape.js';

/** A validated, normalised hook configuration: what a client controls. */
export interface HookConfig {
  /**
   * A label the owner chooses, unique among their hooks (src/hook/hook-name.ts); usable wherever
   * an Id is, and what `hookctl apply` keys hook files by. Absent: the hook has none.
   */
  Name?: string;
  PathPattern: string;
  Callback: string;
  /** Upper-case method tokens; `"*"` means any method. */
  Methods: string[];
  Type: HookTypeId;
  StatusCodeBlackList: number[];
  StatusCodeWhiteList: number[];
  CallbackMethod: CallbackMethod;
  /** Absent means the default JSON event document (SPEC §5). */
  CallbackContent?: string;
  CallbackContentMediaType: string;
  Headers: Record<string, string>;
  Persist: boolean;
  /**
   * This hook's retry schedule, in seconds: entry 0 is the delay before the first attempt, entry
   * i the delay after the i-th failed one. Absent: the daemon's schedule (Standard Webhooks by
   * default). Not in the seed document; an addition for receivers that need another rhythm.
   */
  RetrySchedule?: number[];
  /**
   * At most `PerSecond` callbacks per second to this hook's receiver, with bursts of up to `Burst`
   * (default: one second's worth, `ceil(PerSecond)`). Nothing is dropped: callbacks over the
   * rate wait their turn. Absent: no limit beyond the per-destination concurrency.
   */
  RateLimit?: RateLimit;
  /**
   * Signature schemes of `webhook-signature` (src/signing/): `v1` (HMAC) and/or `v1a`
   * (ed25519). Absent: `{"Schemes": ["v1"]}`.
   */
  Signature?: SignatureConfig;
  /**
   * Ordered delivery per key (src/ordering/): deliveries with the same rendered `Key`
   * go one at a time in trigger order. Absent: concurrent delivery.
   */
  Ordering?: OrderingConfig;
  /**
   * Endpoint verification (src/verification/): `cloudevents` asks the callback's origin
   * by the CloudEvents validation handshake before its first delivery; `off` never. Absent: the
   * daemon's `--callback-verification`.
   */
  Verification?: 'off' | 'cloudevents';
  /**
   * Mutual TLS toward an https receiver (src/client-tls/): client certificate and key, private CA
   * certificates. Write-only: the API shows `presentTls` of it.
   */
  Tls?: ClientTls;
  /**
   * OAuth2 client credentials (src/oauth2/): hookd sends `Authorization: Bearer` with a token it
   * gets from `TokenUrl`. `ClientSecret` is write-only: the API shows `presentAuth` of it.
   */
  Auth?: HookAuth;
  /**
   * The chat markup escaping of every value substituted into `CallbackContent`
   * (src/hook/content-escape.ts): `slack`, `mattermost`, `discord`, `markdown`. Absent: `none`.
   */
  ContentEscape?: ContentEscape;
  /**
   * A CEL expression (src/filter/) that must be true for the hook to fire, after PathPattern,
   * Methods and the status lists. Absent: every request they select.
   */
  Filter?: string;
  /**
   * A JavaScript `function transform(event)` (src/transform/) run in a sandbox once per delivery:
   * it may replace the payload, add headers or skip the delivery. Absent: the rendered callback.
   */
  Transform?: string;
}

/** A hook's `Ordering`: `Key` is a template as `CallbackContent` (`$1`…`$n`, `$REQUEST_PATH`, …). */
export interface OrderingConfig {
  Key: string;
}

/** A hook's callback rate limit (a token bucket: `Burst` tokens, refilled at `PerSecond`). */
export interface RateLimit {
  PerSecond: number;
  Burst: number;
}

/** A stored hook: the configuration plus the fields the server owns. */
export interface Hook extends HookConfig {
  Id: string;
  Owner: string;
  /** ISO 8601 with milliseconds and an explicit UTC offset, e.g. `2026-11-22T12:00:00.000+00:00`. */
  Modified: string;
  /**
   * `active`, or `disabled` when its receiver answered 410 Gone or every attempt failed for the
   * auto-disable period and count (see delivery); `PUT` or `POST /hooks/{id}/enable` re-enables.
   */
  State: HookState;
  /** Why a disabled hook was disabled, for a person; absent while active. */
  DisabledReason?: string;
  /** When it was disabled (same format as `Modified`); absent while active. */
  DisabledAt?: string;
}

export type HookState = 'active' | 'disabled';
/** The `State` the API shows: the stored states and `unverified` (an active hook whose origin has not agreed yet). */
export type ShownHookState = HookState | 'unverified';

export const HOOK_TYPES = [
  {
    Type: 0,
    Name: 'BeforeCompletion',
    Description:
      'Fires when the triggering request arrives, before it is forwarded. The response status is not known yet, so the status code lists must be empty.',
  },
  {
    Type: 1,
    Name: 'AfterCompletion',
    Description:
      'Fires once the response to the triggering request is complete, including errors hookd produced itself (502, 504). The status code lists apply.',
  },
] as const;

export type HookTypeId = (typeof HOOK_TYPES)[number]['Type'];
export const BEFORE_COMPLETION: HookTypeId = 0;
export const AFTER_COMPLETION: HookTypeId = 1;

export const CALLBACK_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE', 'GET'] as const;
export type CallbackMethod = (typeof CALLBACK_METHODS)[number];

/** Fields the server sets; accepted in input and ignored, so `get` → edit → `replace` works. */
export const READ_ONLY_FIELDS = [
  'Id',
  'Owner',
  'Modified',
  'State',
  'DisabledReason',
  'DisabledAt',
  'VerificationResult',
  'LastFilterError',
] as const;

/** `Modified` format: ISO 8601, milliseconds, `+00:00` rather than `Z` (the seed asks for an offset). */
export function isoTimestamp(d: Date = new Date()): string {
  return d.toISOString().replace('Z', '+00:00');
}

/**
 * JSON Schemas (draft-07) of the notification bodies, one per event type: the documented
 * contract (docs/NOTIFICATIONS.md). `npm run build` writes them to schema/notification-<type>.schema.json;
 * the tests validate every notification they receive against them.
 */
import type { NotificationType } from './notification-endpoint.js';

const time = { type: 'string', format: 'date-time' } as const;
const nullableInt = { type: ['integer', 'null'] } as const;

function envelope(type: NotificationType, description: string, data: Record<string, unknown>) {
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: `https://hookd.dev/schema/notification-${type}.schema.json`,
    title: `hookd notification ${type}`,
    description,
    type: 'object',
    additionalProperties: false,
    required: ['type', 'timestamp', 'data'],
    properties: {
      type: { const: type },
      timestamp: { ...time, description: 'When hookd queued the notification.' },
      data: { type: 'object', additionalProperties: false, ...data },
    },
  };
}

const breakerData = (opened: boolean) => ({
  required: ['Endpoint', 'State', 'Time', 'HookIds', ...(opened ? ['ProbeAt'] : [])],
  properties: {
    Endpoint: {
      type: 'string',
      description:
        'What the circuit breaker guards: a callback URL (per-endpoint breaker) or an origin scheme://host:port (per-host breaker).',
    },
    State: { const: opened ? 'open' : 'closed' },
    ...(opened && { ProbeAt: { ...time, description: 'When the next (probe) attempt goes out.' } }),
    Time: time,
    HookIds: {
      type: 'array',
      items: { type: 'string' },
      description: "The recipient's hooks whose callbacks go there (every user's for the operator).",
    },
  },
});

export const NOTIFICATION_SCHEMAS: Record<NotificationType, Record<string, unknown>> = {
  'hook.disabled': envelope(
    'hook.disabled',
    'A hook was disabled: its receiver answered 410 Gone, or every attempt failed for the auto-disable period and count.',
    {
      required: [
        'HookId',
        'Owner',
        'Callback',
        'PathPattern',
        'State',
        'Cause',
        'DisabledReason',
        'DisabledAt',
      ],
      properties: {
        HookId: { type: 'string' },
        Owner: { type: 'string' },
        Callback: { type: 'string' },
        PathPattern: { type: 'string' },
        State: { const: 'disabled' },
        Cause: { enum: ['gone', 'failing'], description: 'gone: 410 Gone; failing: auto-disable.' },
        DisabledReason: { type: 'string' },
        DisabledAt: time,
        FailingSince: { ...time, description: 'failing: the first failed attempt of the streak.' },
        FailedAttempts: {
          type: 'integer',
          minimum: 1,
          description: 'failing: failed attempts in the streak.',
        },
      },
    },
  ),
  'delivery.failed': envelope(
    'delivery.failed',
    'A delivery failed for good (a dead letter): its last attempt failed, or the receiver answered 410 Gone.',
    {
      required: [
        'DeliveryId',
        'HookId',
        'Owner',
        'Attempts',
        'LastStatusCode',
        'LastError',
        'Url',
        'Method',
        'FailedAt',
        'Trigger',
      ],
      properties: {
        DeliveryId: { type: 'string', description: 'GET /_hookd/deliveries/{id} shows its attempts.' },
        HookId: { type: 'string' },
        Owner: { type: 'string' },
        Attempts: { type: 'integer', minimum: 1 },
        LastStatusCode: nullableInt,
        LastError: { type: ['string', 'null'] },
        Url: { type: 'string' },
        Method: { type: 'string' },
        FailedAt: { ...time, description: 'When the last attempt started.' },
        Trigger: {
          type: 'object',
          additionalProperties: false,
          required: ['Kind', 'Method', 'Path', 'StatusCode', 'User'],
          properties: {
            Kind: { type: 'string', enum: ['request'], description: 'The request that fired the hook.' },
            Method: { type: 'string' },
            Path: { type: 'string' },
            StatusCode: nullableInt,
            User: {
              type: ['string', 'null'],
              description: 'Who made the triggering request; null: anonymous.',
            },
          },
        },
      },
    },
  ),
  'endpoint.breaker_opened': envelope(
    'endpoint.breaker_opened',
    "A callback destination's circuit breaker opened after repeated failures: attempts there wait until a probe succeeds.",
    breakerData(true),
  ),
  'endpoint.breaker_closed': envelope(
    'endpoint.breaker_closed',
    "A callback destination's circuit breaker closed again: a probe attempt got an answer.",
    breakerData(false),
  ),
  'hook.certificate_expiring': envelope(
    'hook.certificate_expiring',
    "A hook's client certificate (Tls) expires within 14 days, or has expired: sent once per hook and certificate by each running instance.",
    {
      required: ['HookId', 'Owner', 'Callback', 'Subject', 'Sha256Fingerprint', 'NotAfter', 'Expired'],
      properties: {
        HookId: { type: 'string' },
        Owner: { type: 'string' },
        Callback: { type: 'string' },
        Subject: { type: 'string', description: "The client certificate's subject." },
        Sha256Fingerprint: { type: 'string' },
        NotAfter: { ...time, description: 'When the certificate ends.' },
        Expired: { type: 'boolean', description: 'true: NotAfter has passed already.' },
      },
    },
  ),
};

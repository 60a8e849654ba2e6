/**
 * Notification endpoints: where hookd tells a user (or, for the admin's endpoints, the operator)
 * about operational events of their hooks. Delivered through the delivery pipeline like hook
 * callbacks: durable, retried, signed (Standard Webhooks) with the endpoint's own secret.
 */
import { type FieldError, HookdError } from '../errors/index.js';
import { checkSignature, type SignatureConfig } from '../signing/index.js';
import { didYouMean, sortableId } from '../util/index.js';
import { NOTIFICATION_TYPES, type NotificationEndpointFields, type NotificationType } from '../wire/index.js';

export { isEndpointId, NOTIFICATION_TYPES, type NotificationType } from '../wire/index.js';

/** The user whose endpoints get every user's notifications: the operator. */
export const OPERATOR_USER = 'admin';

export interface NotificationEndpoint extends NotificationEndpointFields {
  /** Signature schemes (src/signing/); absent: `v1`. */
  Signature?: SignatureConfig;
}

/** `ne_` + 10 characters of time + 20 random ones (Crockford base32), like hook Ids. */
export function newEndpointId(now: number = Date.now()): string {
  return sortableId('ne_', 20, now);
}

export const ENDPOINT_ID_SHAPE = /^ne_[0-9A-Z]{30}$/;

export interface EndpointInput {
  Url: string;
  Events: string[];
  Description: string;
  Signature?: SignatureConfig;
}

/** The fields a client sets; the rest of KNOWN are the server's, accepted so a `get` can be sent back. */
const FIELDS = ['Url', 'Events', 'Description', 'Signature'];
const KNOWN = new Set([
  'Url',
  'Events',
  'Description',
  'Id',
  'Owner',
  'Created',
  'Secret',
  'Signature',
  'PublicKey',
]);

/** Checks a `POST /_hookd/notifications` body; throws VALIDATION_FAILED listing every problem. */
export function validateEndpoint(body: unknown): EndpointInput {
  const errors: FieldError[] = [];
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new HookdError('VALIDATION_FAILED', 'the body must be a JSON object such as {"Url": "https://…"}', {
      errors: [{ field: '(body)', message: 'must be a JSON object' }],
    });
  }
  const b = body as Record<string, unknown>;
  for (const k of Object.keys(b)) {
    if (!KNOWN.has(k))
      errors.push({
        field: k,
        message: `is not a field of a notification endpoint (Url, Events, Description, Signature)${didYouMean(k, FIELDS)}`,
      });
  }
  let url = '';
  if (typeof b.Url !== 'string' || b.Url === '') {
    errors.push({ field: 'Url', message: 'is required: an absolute http:// or https:// URL' });
  } else if (b.Url.length > 2048 || !URL.canParse(b.Url) || !/^https?:$/.test(new URL(b.Url).protocol)) {
    errors.push({
      field: 'Url',
      message: 'must be an absolute http:// or https:// URL of at most 2048 characters',
    });
  } else {
    url = b.Url;
  }
  let events: string[] = ['*'];
  if (b.Events !== undefined) {
    if (!Array.isArray(b.Events) || b.Events.length === 0) {
      errors.push({
        field: 'Events',
        message: `must be a non-empty list of event types: "*" or ${NOTIFICATION_TYPES.join(', ')}`,
      });
    } else {
      events = [];
      b.Events.forEach((e, i) => {
        if (e !== '*' && !(NOTIFICATION_TYPES as readonly unknown[]).includes(e)) {
          errors.push({
            field: `Events[${i}]`,
            message: `must be "*" or one of ${NOTIFICATION_TYPES.join(', ')}${didYouMean(e, NOTIFICATION_TYPES)}`,
          });
        } else if (!events.includes(e as string)) events.push(e as string);
      });
    }
  }
  let description = '';
  if (b.Description !== undefined) {
    if (typeof b.Description !== 'string' || b.Description.length > 256) {
      errors.push({ field: 'Description', message: 'must be a string of at most 256 characters' });
    } else description = b.Description;
  }
  const signature = b.Signature === undefined ? undefined : checkSignature(b.Signature);
  if (signature) errors.push(...signature.errors);
  if (errors.length > 0) {
    throw new HookdError('VALIDATION_FAILED', errors.map((e) => `${e.field} ${e.message}`).join('; '), {
      errors,
    });
  }
  return {
    Url: url,
    Events: events,
    Description: description,
    ...(signature?.config && { Signature: signature.config }),
  };
}

/** Whether an endpoint wants events of this type. */
export function wants(e: NotificationEndpoint, type: NotificationType): boolean {
  return e.Events.includes('*') || e.Events.includes(type);
}

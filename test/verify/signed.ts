import {
  newSigningSecret,
  receiverSignatures,
  type SignatureScheme,
  type SigningKeys,
  secretKey,
  signatureFor,
} from '../../src/signing/index.js';

/** A receiver-format template like Stripe's: the timestamp in the header, signed with the body. */
export const STRIPE = {
  Header: 'Stripe-Signature',
  Value: 't={timestamp},v1={hmac_sha256_hex}',
  Signed: '{timestamp}.{body}',
} as const;
/** One with the MAC in base64 over the id and body, the id in the header. */
export const BASE64_ID = {
  Header: 'X-Sig',
  Value: 'id={id};mac={hmac_sha256_base64}',
  Signed: '{id}:{body}',
} as const;

export const ALL_SCHEMES: SignatureScheme[] = ['v1', 'v1a', 'github', { ...STRIPE }];

export interface Signed {
  id: string;
  timestamp: string;
  /** `[name, value, …]` as hookd hands them to every transport. */
  list: string[];
  /** The same as a plain object with the names as hookd writes them. */
  headers: Record<string, string>;
}

/**
 * The headers hookd's own signing code gives one attempt for `schemes`: what the pipeline puts
 * on an HTTP callback and on every broker message.
 */
export function signWithHookd(
  body: string,
  opts: { secret: string; schemes?: SignatureScheme[]; keys?: SigningKeys; now?: number; id?: string },
): Signed {
  const now = opts.now ?? Date.now();
  const id = opts.id ?? `dl_verify${Math.random().toString(36).slice(2)}`;
  const timestamp = String(Math.floor(now / 1000));
  const keys = opts.keys ?? { current: secretKey(opts.secret), previous: undefined, previousValidUntil: 0 };
  const schemes = opts.schemes ?? ALL_SCHEMES;
  const list = ['webhook-id', id, 'webhook-timestamp', timestamp];
  const sig = signatureFor(schemes, keys, id, timestamp, body, now);
  if (sig !== '') list.push('webhook-signature', sig);
  list.push(...(receiverSignatures(schemes, keys, id, timestamp, body) ?? []));
  const headers: Record<string, string> = {};
  for (let i = 0; i < list.length; i += 2) headers[list[i]!] = list[i + 1]!;
  return { id, timestamp, list, headers };
}

export { newSigningSecret, secretKey };

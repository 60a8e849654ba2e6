/**
 * Which Standard Webhooks signature schemes a hook (or a notification endpoint) sends in
 * `webhook-signature`: `v1` (HMAC-SHA256 with the shared secret, the default) and `v1a`
 * (ed25519; receivers verify with the public key only). Both at once while receivers move over.
 */
import type { FieldError } from '../errors/index.js';

export const SIGNATURE_SCHEMES = ['v1', 'v1a'] as const;
export type SignatureScheme = (typeof SIGNATURE_SCHEMES)[number];

/** The `Signature` field of a hook or notification endpoint. Absent: `{"Schemes": ["v1"]}`. */
export interface SignatureConfig {
  /** In the order they appear in the header; no repeats. */
  Schemes: SignatureScheme[];
}

export const DEFAULT_SCHEMES: readonly SignatureScheme[] = ['v1'];

/** The JSON Schema of the field (the hook schema and the notification endpoint's use it). */
export const SIGNATURE_JSON_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['Schemes'],
  properties: {
    Schemes: {
      type: 'array',
      minItems: 1,
      maxItems: 2,
      uniqueItems: true,
      items: { type: 'string', enum: [...SIGNATURE_SCHEMES] },
    },
  },
  description:
    'Signature schemes of webhook-signature: "v1" (HMAC-SHA256 with the secret) and/or "v1a" (ed25519; verify with PublicKey from GET /hooks/{id}/secret). Left out: ["v1"].',
  examples: [{ Schemes: ['v1a'] }, { Schemes: ['v1', 'v1a'] }],
} as const;

/** Checks a `Signature` value by hand (notification endpoints have no JSON Schema validator). */
export function checkSignature(
  value: unknown,
  field = 'Signature',
): { config?: SignatureConfig; errors: FieldError[] } {
  const rule = `must be {"Schemes": [...]} listing "v1" and/or "v1a" once each`;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { errors: [{ field, message: rule }] };
  }
  const v = value as Record<string, unknown>;
  const extra = Object.keys(v).filter((k) => k !== 'Schemes');
  const s = v.Schemes;
  if (
    extra.length > 0 ||
    !Array.isArray(s) ||
    s.length === 0 ||
    new Set(s).size !== s.length ||
    !s.every((x) => (SIGNATURE_SCHEMES as readonly unknown[]).includes(x))
  ) {
    return {
      errors: [{ field: extra.length > 0 ? `${field}.${extra[0]}` : `${field}.Schemes`, message: rule }],
    };
  }
  return { config: { Schemes: [...(s as SignatureScheme[])] }, errors: [] };
}

/**
 * Callback signatures: Standard Webhooks' HMAC `v1` (standard-webhooks.ts) and ed25519 `v1a`,
 * and the receivers' own formats (`github`, templates: receiver-formats.ts). A hook or notification endpoint chooses its schemes with
 * `Signature: {"Schemes": [...]}`; the pipeline signs each attempt through `signatureFor`; the
 * API shows the public key with `publicKeyOf`.
 */
export { PUBLIC_KEY_PREFIX, publicKeyFromText } from './ed25519-key.js';
export { publicKeyOf } from './public-key.js';
export { receiverSignatures, textKeyOf } from './receiver-formats.js';
export {
  checkSignature,
  DEFAULT_SCHEMES,
  GITHUB_HEADER,
  HOOKD_SET_HEADERS,
  type NamedScheme,
  SIGNATURE_JSON_SCHEMA,
  SIGNATURE_SCHEMES,
  type SignatureConfig,
  type SignatureScheme,
  schemeHeader,
  schemeLabel,
  type TemplateScheme,
} from './schemes.js';
export { signatureFor, signatureHeader, signV1a } from './sign-attempt.js';
export {
  newSigningSecret,
  SECRET_PREFIX,
  type SigningKeys,
  secretKey,
} from './standard-webhooks.js';

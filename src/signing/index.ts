/**
 * Signature schemes beyond HMAC (issue 24): a hook or notification endpoint chooses `v1`
 * and/or `v1a` (ed25519) with `Signature: {"Schemes": [...]}`; the pipeline signs each attempt
 * through `signatureFor`; the API shows the public key with `publicKeyOf`.
 */
export { PUBLIC_KEY_PREFIX, publicKeyFromText } from './ed25519-key.js';
export { publicKeyOf } from './public-key.js';
export {
  checkSignature,
  DEFAULT_SCHEMES,
  SIGNATURE_JSON_SCHEMA,
  SIGNATURE_SCHEMES,
  type SignatureConfig,
  type SignatureScheme,
} from './schemes.js';
export { signatureFor, signV1a } from './sign-attempt.js';

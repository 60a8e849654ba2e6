/**
 * hookd/verify: a receiver's check of a callback's signature in every format hookd signs
 * (Standard Webhooks v1 and v1a, `github`, a hook's template), from the raw body and the headers
 * in any transport's shape. It imports only node:crypto: a receiver installs it without hookd.
 */
export type { CallbackHeaders, HeaderValue } from './headers.js';
export {
  type TemplateScheme,
  type VerifyOptions,
  type VerifyResult,
  type VerifyScheme,
  verifyCallback,
} from './verify-callback.js';

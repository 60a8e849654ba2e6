import { ed25519Of } from './sign-attempt.js';
import { secretKey } from './standard-webhooks.js';

/** The `whpk_…` public key a hook's `v1a` signatures verify with, for its `whsec_…` secret. */
export function publicKeyOf(secret: string): string {
  return ed25519Of(secretKey(secret)).publicText;
}

/**
 * Secrets at rest: the signing secrets and other key material in the stores are sealed with
 * AES-256-GCM (a data key per value, sealed by a key from a file outside the database). The
 * daemon opens the key file with `openSecretsKey` at start and hands the `SecretSealer` to its
 * stores as their SecretCodec; `hookd secrets rotate-key` runs `rotateSecretsKey`
 * (docs/DECISIONS.md "Secrets at rest").
 */
export { DEFAULT_KEY_FILE, KEY_FILE_FORMAT, keyIdOf, readKeyFile, SecretsKeyError } from './key-file.js';
export {
  type MarkerOutcome,
  openSecretsKey,
  resealSecrets,
  rotateSecretsKey,
  type SealedTables,
} from './open-secrets.js';
export { isSealed, SecretSealer, sealedKeyId } from './sealer.js';

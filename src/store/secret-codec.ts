/**
 * How the stores write signing secrets and other key material: through a codec the daemon hands
 * them (src/secrets/ seals every value with AES-256-GCM under a key kept outside the database).
 * The stores know nothing of keys; they apply `seal` before a write and `open` after a read, and
 * offer their raw rows for re-sealing (a migration from plain text, a key rotation).
 */
import type { HookSecretRecord } from './delivery-store.js';

export interface SecretCodec {
  /** The text to store for `plain`, bound to the row it belongs to (`hookId`). */
  seal(hookId: string, plain: string): string;
  /** The plain value of a stored text; throws a named error when it cannot be opened. */
  open(hookId: string, stored: string): string;
}

/**
 * Values stored as they are: the stores' default for tests and tools that build a store by hand.
 * The daemon never uses it for a store on disk (src/daemon/open-store.ts passes the sealer).
 */
export const PLAIN_SECRETS: SecretCodec = {
  seal: (_hookId, plain) => plain,
  open: (_hookId, stored) => stored,
};

/** One row of a secrets table as stored, for re-sealing. */
export interface StoredSecretRow {
  hookId: string;
  secret: string;
  previous: string | null;
}

/** The raw rows of a secrets table: what a migration or key rotation walks and rewrites. */
export interface SealedSecretTable {
  /** Up to `limit` rows with a hookId greater than `after`, ordered by hookId. */
  storedSecrets(after: string, limit: number): Promise<StoredSecretRow[]>;
  /**
   * Writes `next` over the row if it still holds `before`'s texts (a rotation or another instance
   * that wrote it meanwhile wins); true when it was written.
   */
  replaceStoredSecret(before: StoredSecretRow, next: StoredSecretRow): Promise<boolean>;
}

/** A secret record sealed for its row. */
export function sealRecord(codec: SecretCodec, r: HookSecretRecord): StoredSecretRow {
  return {
    hookId: r.hookId,
    secret: codec.seal(r.hookId, r.secret),
    previous: r.previous === null ? null : codec.seal(r.hookId, r.previous),
  };
}

/** A secret record from its stored row. */
export function openRecord(
  codec: SecretCodec,
  row: StoredSecretRow & { previousValidUntil: number | null },
): HookSecretRecord {
  return {
    hookId: row.hookId,
    secret: codec.open(row.hookId, row.secret),
    previous: row.previous === null ? null : codec.open(row.hookId, row.previous),
    previousValidUntil: row.previousValidUntil,
  };
}

/**
 * The raw rows of a secrets table, as the walks that re-seal them read and write them: shapes
 * the delivery store and the secret codec share, so neither imports the other for them.
 */

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

/**
 * How the stores write signing secrets and other key material: through a codec the daemon hands
 * them (src/secrets/ seals every value with AES-256-GCM under a key kept outside the database).
 * The stores know nothing of keys; they apply `seal` before a write and `open` after a read, and
 * offer their raw rows for re-sealing (a migration from plain text, a key rotation).
 */
import type { Hook } from '../hook/index.js';
import type { HookSecretRecord } from './delivery-store.js';
import type { StoredSecretRow } from './sealed-secret-table.js';

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

export type { SealedSecretTable, StoredSecretRow } from './sealed-secret-table.js';

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

/** Whether a URL carries credentials (user info before its host). */
export function hasUserInfo(url: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(url);
}

/** Marks a stored URL that is sealed (a delivery's URL with credentials). */
const SEALED_URL = 'sealed:';

/** A URL as stored: sealed, and marked so, when it carries credentials. */
export function sealUrl(codec: SecretCodec, hookId: string, url: string): string {
  return hasUserInfo(url) ? SEALED_URL + codec.seal(hookId, url) : url;
}

/** A stored URL as it was given. */
export function openUrl(codec: SecretCodec, hookId: string, stored: string): string {
  return stored.startsWith(SEALED_URL) ? codec.open(hookId, stored.slice(SEALED_URL.length)) : stored;
}

/**
 * The document stored for a hook. A Callback with credentials (`https://user:pass@host/…`, a
 * broker's `amqp://user:pass@…`) is kept sealed in `SealedCallback`, and `Callback` without them.
 */
export function hookDocument(codec: SecretCodec, hook: Hook): string {
  const credentials = hasUserInfo(hook.Callback);
  if (!credentials && hook.Tls === undefined && hook.Auth === undefined) return JSON.stringify(hook);
  const { Tls, Auth, ...rest } = hook;
  return JSON.stringify({
    ...rest,
    ...(credentials && {
      Callback: hook.Callback.replace(/\/\/[^/?#]*@/, '//'),
      SealedCallback: codec.seal(hook.Id, hook.Callback),
    }),
    // A client certificate's key: the whole field, sealed.
    ...(Tls !== undefined && { SealedTls: codec.seal(hook.Id, JSON.stringify(Tls)) }),
    // OAuth2 client credentials: the whole field, sealed.
    ...(Auth !== undefined && { SealedAuth: codec.seal(hook.Id, JSON.stringify(Auth)) }),
  });
}

/** A hook from its stored document, its Callback as given. */
export function hookFromDocument(codec: SecretCodec, doc: string): Hook {
  const h = JSON.parse(doc) as Hook & { SealedCallback?: string; SealedTls?: string; SealedAuth?: string };
  if (h.SealedCallback !== undefined) {
    h.Callback = codec.open(h.Id, h.SealedCallback);
    delete h.SealedCallback;
  }
  if (h.SealedTls !== undefined) {
    h.Tls = JSON.parse(codec.open(h.Id, h.SealedTls)) as Hook['Tls'];
    delete h.SealedTls;
  }
  if (h.SealedAuth !== undefined) {
    h.Auth = JSON.parse(codec.open(h.Id, h.SealedAuth)) as Hook['Auth'];
    delete h.SealedAuth;
  }
  return h;
}

/** One row of a table whose text may hold a sealed value or a credential. */
export interface CredentialRow {
  id: string;
  hookId: string;
  /** A hook's document, or a delivery's URL, as stored. */
  text: string;
}

/**
 * Hook documents (`hook`) or delivery URLs (`url`) that carry a credential, plain (from before
 * sealing) or sealed: what a migration or key rotation walks besides the secrets.
 */
export interface CredentialTable {
  readonly credentialKind: 'hook' | 'url';
  /** Up to `limit` rows with an id greater than `after`, ordered by id, that may carry one. */
  credentialRows(after: string, limit: number): Promise<CredentialRow[]>;
  /** Writes `text` over the row if it still holds what was read; true when written. */
  replaceCredentialRow(row: CredentialRow, text: string): Promise<boolean>;
}

/**
 * The dialect's substring search, `fn(haystack, needle)` > 0 when found: SQLite's `instr`,
 * PostgreSQL's `strpos`. Either is a plain byte search, several times cheaper than a `LIKE '%…%'`,
 * which folds case on every character; the start-up walk runs it over every stored document.
 */
export type SubstringFunction = 'instr' | 'strpos';

/**
 * An SQL condition on a hook document's column that holds for every document that may carry one
 * (`"Sealed` also matches a value that merely starts so: the walk then finds nothing in it).
 */
export const HOOK_DOC_WITH_CREDENTIALS = (col: string, find: SubstringFunction) =>
  `(${find}(${col}, '"Sealed') > 0 OR ${find}(${col}, '@') > 0)`;
/** The same for a delivery's URL column. */
export const URL_WITH_CREDENTIALS = (col: string, find: SubstringFunction) =>
  `(${col} LIKE '${SEALED_URL}%' OR ${find}(${col}, '@') > 0)`;

/**
 * The key file meets the store: at start-up (`openSecretsKey`) and in `hookd secrets rotate-key`
 * (`rotateSecretsKey`). Both walk the stores' secret tables and re-seal, under the current key,
 * every value that is plain (a store from before sealing) or sealed with an older key; each row is
 * rewritten only if it still holds what was read, so instances doing this at once, or a daemon
 * rotating a hook's secret meanwhile, never lose a write. A store that records every value as
 * sealed under the current key (its sealed marker, docs/decisions/0077) is not walked at start.
 */
import { existsSync } from 'node:fs';
import {
  type CredentialRow,
  type CredentialTable,
  hasUserInfo,
  hookDocument,
  hookFromDocument,
  openUrl,
  PLAIN_SECRETS,
  type SealedMarker,
  type SealedSecretTable,
  sealUrl,
} from '../store/index.js';
import {
  createKeyFile,
  type KeySet,
  keyIdOf,
  newKey,
  readKeyFile,
  SecretsKeyError,
  writeKeyFile,
} from './key-file.js';
import { isSealed, SecretSealer, sealedKeyId } from './sealer.js';

const PAGE = 500;

/** One stored row that holds sealed (or plain, from before sealing) values. */
interface Item {
  id: string;
  /** Its values as stored. */
  values: string[];
  /** Writes the row again with every value sealed with the sealer's current key. */
  reseal(sealer: SecretSealer): Promise<boolean>;
}

/** What the walks read: the secrets tables, hook documents, delivery URLs. */
export interface SealedTables {
  secrets: readonly SealedSecretTable[];
  /** Hook documents and delivery URLs that may carry a Callback's credentials. */
  credentials?: readonly CredentialTable[];
  /**
   * The store's "every value sealed under key K" (none in memory): a start under K skips the
   * walk, and a walk that leaves nothing to re-seal records its key.
   */
  marker?: SealedMarker;
}

/**
 * What a start did with the marker: `kept` (it named the current key: no walk), `set` (a walk
 * recorded it), `unset` (a walk ran beside another walk or a write under another key: the next
 * start walks again).
 */
export type MarkerOutcome = 'kept' | 'set' | 'unset';

function secretItems(t: SealedSecretTable): (after: string) => Promise<Item[]> {
  return async (after) =>
    (await t.storedSecrets(after, PAGE)).map((r) => ({
      id: r.hookId,
      values: r.previous === null ? [r.secret] : [r.secret, r.previous],
      reseal: (sealer) =>
        t.replaceStoredSecret(r, {
          hookId: r.hookId,
          secret: sealer.seal(r.hookId, sealer.open(r.hookId, r.secret)),
          previous: r.previous === null ? null : sealer.seal(r.hookId, sealer.open(r.hookId, r.previous)),
        }),
    }));
}

/** The credentials a row holds as stored, if any (a document may hold `@` elsewhere). */
function credentialsOf(t: CredentialTable, row: CredentialRow): string[] {
  if (t.credentialKind === 'url') {
    const opened = openUrl(PLAIN_SECRETS, row.hookId, row.text);
    return opened !== row.text || hasUserInfo(row.text) ? [opened] : [];
  }
  const doc = JSON.parse(row.text) as {
    Callback?: unknown;
    SealedCallback?: unknown;
    SealedTls?: unknown;
    SealedAuth?: unknown;
  };
  const out: string[] = [];
  if (typeof doc.SealedCallback === 'string') out.push(doc.SealedCallback);
  else if (typeof doc.Callback === 'string' && hasUserInfo(doc.Callback)) out.push(doc.Callback);
  if (typeof doc.SealedTls === 'string') out.push(doc.SealedTls);
  if (typeof doc.SealedAuth === 'string') out.push(doc.SealedAuth);
  return out;
}

function credentialItems(t: CredentialTable): (after: string) => Promise<Item[]> {
  return async (after) => {
    const rows = await t.credentialRows(after, PAGE);
    const items: Item[] = [];
    for (const row of rows) {
      // Rows without one still move the page on.
      items.push({
        id: row.id,
        values: credentialsOf(t, row),
        reseal: (sealer) =>
          t.replaceCredentialRow(
            row,
            t.credentialKind === 'url'
              ? sealUrl(sealer, row.hookId, openUrl(sealer, row.hookId, row.text))
              : hookDocument(sealer, hookFromDocument(sealer, row.text)),
          ),
      });
    }
    return items;
  };
}

async function eachItem(tables: SealedTables, visit: (item: Item) => Promise<void> | void): Promise<void> {
  const sources = [...tables.secrets.map(secretItems), ...(tables.credentials ?? []).map(credentialItems)];
  for (const page of sources) {
    let after = '';
    for (;;) {
      const items = await page(after);
      for (const item of items) await visit(item);
      if (items.length < PAGE) break;
      after = items[items.length - 1]!.id;
    }
  }
}

/** Whether a row holds a value that is plain or sealed with another key than `current`. */
const stale = (item: Item, current: string | undefined) =>
  !item.values.every((v) => isSealed(v) && sealedKeyId(v) === current);

/**
 * One walk: the first key id named by a sealed value that `known` lacks, if any, and whether any
 * row needs re-sealing under `current`; a start-up with nothing to re-seal reads the rows once.
 */
async function survey(
  tables: SealedTables,
  known: (id: string) => boolean,
  current?: string,
): Promise<{ missing: string | undefined; anyStale: boolean }> {
  let missing: string | undefined;
  let anyStale = false;
  await eachItem(tables, (item) => {
    for (const v of item.values) {
      if (missing === undefined && isSealed(v) && !known(sealedKeyId(v))) missing = sealedKeyId(v);
    }
    if (!anyStale && stale(item, current)) anyStale = true;
  });
  return { missing, anyStale };
}

/** The first key id named by a sealed value that `known` lacks, if any. */
async function unknownKey(tables: SealedTables, known: (id: string) => boolean): Promise<string | undefined> {
  return (await survey(tables, known)).missing;
}

/** Re-seals what is not sealed with the current key; returns how many rows were rewritten. */
export async function resealSecrets(tables: SealedTables, sealer: SecretSealer): Promise<number> {
  let n = 0;
  const current = sealer.currentKeyId;
  await eachItem(tables, async (item) => {
    if (!stale(item, current)) return;
    if (await item.reseal(sealer)) n++;
  });
  return n;
}

/**
 * The sealer for a daemon's stores: the key file read (or created, for a store that holds no
 * sealed value), checked against the store, and every plain or older value re-sealed. A missing
 * file for a store that holds sealed values, or a file lacking a key the store names, stops the
 * start with an error naming the file: secrets are never written in plain text instead.
 */
export async function openSecretsKey(
  sealer: SecretSealer,
  tables: SealedTables,
): Promise<{ resealed: number; created: boolean; marker?: MarkerOutcome }> {
  const file = sealer.file;
  const marker = tables.marker;
  let created = false;
  let set: KeySet | undefined;
  if (!existsSync(file)) {
    const held = await unknownKey(tables, () => false);
    if (held !== undefined) {
      throw new SecretsKeyError(
        `the secrets key file ${file} does not exist, but the store holds secrets sealed with key ${held}: restore that file, or name where it is with --secrets-key-file`,
      );
    }
    set = createKeyFile(file);
    created = set !== undefined;
  }
  sealer.load(set);
  const current = sealer.currentKeyId;
  // Every value is sealed under the current key, which the file holds: nothing to check or seal.
  if (marker !== undefined && (await marker.sealedUnder()) === current) {
    return { resealed: 0, created, marker: 'kept' };
  }
  // Claimed before the walk reads a row, so that a write the walk misses is noticed.
  const claim = await marker?.beginWalk(current);
  const { missing, anyStale } = await survey(tables, (id) => sealer.hasKey(id), current);
  if (missing !== undefined) {
    throw new SecretsKeyError(
      `the store holds secrets sealed with key ${missing}, which the secrets key file ${file} does not hold (it holds ${[...readKeyFile(file).keys.keys()].join(', ')}): a wrong or an older key file`,
    );
  }
  const resealed = anyStale ? await resealSecrets(tables, sealer) : 0;
  if (marker === undefined || claim === undefined) return { resealed, created };
  return { resealed, created, marker: await finish(marker, sealer, current, claim) };
}

/**
 * Records the walk's key, unless the key changed under it (the sealer read a rotated file): a
 * value it re-sealed then names the new key, and the marker's triggers cleared the claim anyway.
 */
async function finish(
  marker: SealedMarker,
  sealer: SecretSealer,
  walked: string,
  claim: number,
): Promise<MarkerOutcome> {
  if (sealer.currentKeyId !== walked) return 'unset';
  return (await marker.finishWalk(walked, claim)) ? 'set' : 'unset';
}

/**
 * `hookd secrets rotate-key`: a new current key in the file (the replaced one kept, so that
 * running daemons open what they sealed until they pick the file up), every value re-sealed with
 * it, and the keys no value names any more, older than the replaced one, dropped from the file.
 */
export async function rotateSecretsKey(
  file: string,
  tables: SealedTables,
): Promise<{ current: string; resealed: number; retired: string[]; marker?: MarkerOutcome }> {
  const old = readKeyFile(file);
  const missing = await unknownKey(tables, (id) => old.keys.has(id));
  if (missing !== undefined) {
    throw new SecretsKeyError(
      `the store holds secrets sealed with key ${missing}, which ${file} does not hold: not rotating`,
    );
  }
  const key = newKey();
  const current = keyIdOf(key);
  writeKeyFile(file, { current, keys: new Map([[current, key], ...old.keys]) });
  const sealer = new SecretSealer(file).load();
  const claim = await tables.marker?.beginWalk(current);
  const resealed = await resealSecrets(tables, sealer);
  const marked =
    tables.marker === undefined || claim === undefined
      ? undefined
      : await finish(tables.marker, sealer, current, claim);
  const named = new Set<string>();
  await eachItem(tables, (item) => {
    for (const v of item.values) if (isSealed(v)) named.add(sealedKeyId(v));
  });
  const keep = new Map<string, Buffer>();
  const retired: string[] = [];
  for (const [id, k] of readKeyFile(file).keys) {
    if (id === current || id === old.current || named.has(id)) keep.set(id, k);
    else retired.push(id);
  }
  if (retired.length > 0) writeKeyFile(file, { current, keys: keep });
  return { current, resealed, retired, ...(marked !== undefined && { marker: marked }) };
}

/**
 * The key file meets the store: at start-up (`openSecretsKey`) and in `hookd secrets rotate-key`
 * (`rotateSecretsKey`). Both walk the stores' secret tables and re-seal, under the current key,
 * every value that is plain (a store from before sealing) or sealed with an older key; each row is
 * rewritten only if it still holds what was read, so instances doing this at once, or a daemon
 * rotating a hook's secret meanwhile, never lose a write.
 */
import { existsSync } from 'node:fs';
import type { SealedSecretTable, StoredSecretRow } from '../store/index.js';
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

async function eachRow(
  tables: readonly SealedSecretTable[],
  visit: (t: SealedSecretTable, r: StoredSecretRow) => Promise<void> | void,
): Promise<void> {
  for (const t of tables) {
    let after = '';
    for (;;) {
      const rows = await t.storedSecrets(after, PAGE);
      for (const r of rows) await visit(t, r);
      if (rows.length < PAGE) break;
      after = rows[rows.length - 1]!.hookId;
    }
  }
}

const valuesOf = (r: StoredSecretRow): string[] =>
  r.previous === null ? [r.secret] : [r.secret, r.previous];

/** The first key id named by a sealed value that `known` lacks, if any. */
async function unknownKey(
  tables: readonly SealedSecretTable[],
  known: (id: string) => boolean,
): Promise<string | undefined> {
  let missing: string | undefined;
  await eachRow(tables, (_t, r) => {
    for (const v of valuesOf(r))
      if (missing === undefined && isSealed(v) && !known(sealedKeyId(v))) missing = sealedKeyId(v);
  });
  return missing;
}

/** Re-seals what is not sealed with the current key; returns how many rows were rewritten. */
export async function resealSecrets(
  tables: readonly SealedSecretTable[],
  sealer: SecretSealer,
): Promise<number> {
  let n = 0;
  const current = sealer.currentKeyId;
  await eachRow(tables, async (t, r) => {
    if (valuesOf(r).every((v) => isSealed(v) && sealedKeyId(v) === current)) return;
    const next: StoredSecretRow = {
      hookId: r.hookId,
      secret: sealer.seal(r.hookId, sealer.open(r.hookId, r.secret)),
      previous: r.previous === null ? null : sealer.seal(r.hookId, sealer.open(r.hookId, r.previous)),
    };
    if (await t.replaceStoredSecret(r, next)) n++;
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
  tables: readonly SealedSecretTable[],
): Promise<{ resealed: number; created: boolean }> {
  const file = sealer.file;
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
  const missing = await unknownKey(tables, (id) => sealer.hasKey(id));
  if (missing !== undefined) {
    throw new SecretsKeyError(
      `the store holds secrets sealed with key ${missing}, which the secrets key file ${file} does not hold (it holds ${[...readKeyFile(file).keys.keys()].join(', ')}): a wrong or an older key file`,
    );
  }
  return { resealed: await resealSecrets(tables, sealer), created };
}

/**
 * `hookd secrets rotate-key`: a new current key in the file (the replaced one kept, so that
 * running daemons open what they sealed until they pick the file up), every value re-sealed with
 * it, and the keys no value names any more, older than the replaced one, dropped from the file.
 */
export async function rotateSecretsKey(
  file: string,
  tables: readonly SealedSecretTable[],
): Promise<{ current: string; resealed: number; retired: string[] }> {
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
  const resealed = await resealSecrets(tables, sealer);
  const named = new Set<string>();
  await eachRow(tables, (_t, r) => {
    for (const v of valuesOf(r)) if (isSealed(v)) named.add(sealedKeyId(v));
  });
  const keep = new Map<string, Buffer>();
  const retired: string[] = [];
  for (const [id, k] of readKeyFile(file).keys) {
    if (id === current || id === old.current || named.has(id)) keep.set(id, k);
    else retired.push(id);
  }
  if (retired.length > 0) writeKeyFile(file, { current, keys: keep });
  return { current, resealed, retired };
}

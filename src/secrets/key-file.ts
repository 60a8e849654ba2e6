/**
 * The secrets key file: the keys that seal the stored secrets, kept outside the database (a dump
 * or a replica of the database alone opens nothing). JSON, mode 0600:
 *
 *   {"format": "hookd-secrets-key 1", "current": "k…", "keys": {"k…": "<base64 of 32 bytes>", …}}
 *
 * `current` seals every new value; every key listed opens. A key's id is derived from the key
 * itself, so a stored value names the one key that opens it, and no file can hold another key
 * under that name: a wrong file is told apart from a damaged value.
 */
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, linkSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';

export const KEY_FILE_FORMAT = 'hookd-secrets-key 1';
/** The file's name in the data dir, beside admin.token, when `--secrets-key-file` is not given. */
export const DEFAULT_KEY_FILE = 'secrets.key';

/** A key file that cannot be used, or that does not fit the store: start-up stops on it. */
export class SecretsKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretsKeyError';
  }
}

export interface KeySet {
  /** The id of the key that seals new values. */
  current: string;
  /** Every key that opens, by id (the current one included). */
  keys: Map<string, Buffer>;
}

/** The id a key is known by: `k` and 16 hex digits of a hash of it. */
export function keyIdOf(key: Buffer): string {
  return `k${createHash('sha256').update('hookd secrets key id\0').update(key).digest('hex').slice(0, 16)}`;
}

/** A new 256-bit key. */
export function newKey(): Buffer {
  return randomBytes(32);
}

/** Reads and checks the key file; throws SecretsKeyError naming it when it is not one. */
export function readKeyFile(file: string): KeySet {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new SecretsKeyError(`cannot read the secrets key file ${file}: ${(err as Error).message}`);
  }
  const bad = (why: string) =>
    new SecretsKeyError(`the secrets key file ${file} is not a hookd secrets key file: ${why}`);
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw bad('not JSON');
  }
  const d = doc as { format?: unknown; current?: unknown; keys?: unknown };
  if (typeof d !== 'object' || d === null || d.format !== KEY_FILE_FORMAT) {
    throw bad(`"format" must be "${KEY_FILE_FORMAT}"`);
  }
  if (typeof d.keys !== 'object' || d.keys === null || Array.isArray(d.keys))
    throw bad('"keys" must be an object');
  const keys = new Map<string, Buffer>();
  for (const [id, b64] of Object.entries(d.keys as Record<string, unknown>)) {
    const key = typeof b64 === 'string' ? Buffer.from(b64, 'base64') : Buffer.alloc(0);
    if (key.length !== 32) throw bad(`key ${id} is not the base64 of 32 bytes`);
    if (keyIdOf(key) !== id)
      throw bad(`key ${id} is listed under a name that is not its own (${keyIdOf(key)})`);
    keys.set(id, key);
  }
  if (typeof d.current !== 'string' || !keys.has(d.current)) throw bad('"current" must name one of "keys"');
  return { current: d.current, keys };
}

function serialise(set: KeySet): string {
  const keys: Record<string, string> = {};
  // The current key first: the file reads newest to oldest.
  keys[set.current] = set.keys.get(set.current)!.toString('base64');
  for (const [id, key] of set.keys) if (id !== set.current) keys[id] = key.toString('base64');
  return `${JSON.stringify({ format: KEY_FILE_FORMAT, current: set.current, keys }, null, 2)}\n`;
}

/**
 * Creates the file with one new key, only if no file is there: of instances starting together
 * on one shared file, one creates it and the others read that one. Returns undefined when another
 * process created it first.
 */
export function createKeyFile(file: string): KeySet | undefined {
  const key = newKey();
  const set: KeySet = { current: keyIdOf(key), keys: new Map([[keyIdOf(key), key]]) };
  // Written whole beside it, then linked into place: a reader never sees half a file, and the link
  // fails when the name exists (the exclusive create).
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  writeFileSync(tmp, serialise(set), { mode: 0o600, flag: 'wx' });
  try {
    linkSync(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
    throw new SecretsKeyError(`cannot create the secrets key file ${file}: ${(err as Error).message}`);
  } finally {
    unlinkSync(tmp);
  }
  return set;
}

/** Replaces the file with `set`, atomically (a rename), mode 0600. */
export function writeKeyFile(file: string, set: KeySet): void {
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  writeFileSync(tmp, serialise(set), { mode: 0o600, flag: 'wx' });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
}

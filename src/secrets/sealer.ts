/**
 * Envelope encryption of stored secrets with AES-256-GCM: each value gets a data key of its own,
 * which seals the value (bound to its row, the hook's Id, as additional data), and the data key is
 * sealed by the key file's current key (bound to that key's id). A stored value reads
 *
 *   hkx1:<key id>:<base64 of iv, sealed data key, tag>:<base64 of iv, sealed value, tag>
 *
 * so it names the key that opens it, and a key rotation could re-seal data keys alone. Nothing in
 * it is the secret; a value moved to another hook's row does not open.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { unwatchFile, watchFile } from 'node:fs';
import type { SecretCodec } from '../store/index.js';
import { type KeySet, readKeyFile, SecretsKeyError } from './key-file.js';

const PREFIX = 'hkx1:';
const IV = 12;
const TAG = 16;

/** Whether a stored text is sealed (anything else is a plain value from before). */
export function isSealed(stored: string): boolean {
  return stored.startsWith(PREFIX);
}

/** The id of the key a sealed text names. */
export function sealedKeyId(stored: string): string {
  return stored.slice(PREFIX.length, stored.indexOf(':', PREFIX.length));
}

function gcmSeal(key: Buffer, plain: Buffer, aad: string): string {
  const iv = randomBytes(IV);
  const c = createCipheriv('aes-256-gcm', key, iv).setAAD(Buffer.from(aad));
  const body = Buffer.concat([c.update(plain), c.final()]);
  return Buffer.concat([iv, body, c.getAuthTag()]).toString('base64');
}

function gcmOpen(key: Buffer, text: string, aad: string): Buffer {
  const all = Buffer.from(text, 'base64');
  if (all.length < IV + TAG) throw new Error('too short');
  const d = createDecipheriv('aes-256-gcm', key, all.subarray(0, IV)).setAAD(Buffer.from(aad));
  d.setAuthTag(all.subarray(all.length - TAG));
  return Buffer.concat([d.update(all.subarray(IV, all.length - TAG)), d.final()]);
}

/**
 * The stores' SecretCodec. It is made before the stores (they are built with it) and its keys are
 * loaded once the key file has been checked against them (`openSecretsKey`); until then it seals
 * and opens nothing, so no value is ever written in plain text by mistake.
 */
export class SecretSealer implements SecretCodec {
  private loaded: KeySet | undefined;

  /** @param file the key file, read at `load` and again when a value names a key it lacks. */
  constructor(readonly file: string) {}

  /** Takes the keys (`set`, or the file's). */
  load(set?: KeySet): this {
    this.loaded = set ?? readKeyFile(this.file);
    return this;
  }

  private get set(): KeySet {
    if (this.loaded === undefined) {
      throw new SecretsKeyError(`the secrets key file ${this.file} has not been opened yet`);
    }
    return this.loaded;
  }

  /** The id of the key new values are sealed with. */
  get currentKeyId(): string {
    return this.set.current;
  }

  /** Whether the file holds the key with this id (read again once when it does not). */
  hasKey(id: string): boolean {
    if (this.set.keys.has(id)) return true;
    this.reload();
    return this.set.keys.has(id);
  }

  /** Reads the file again (a rotation wrote it); a file that became unreadable keeps the keys held. */
  reload(): void {
    try {
      this.loaded = readKeyFile(this.file);
    } catch {
      // The keys held still open what they sealed; the next start reports the file.
    }
  }

  /**
   * Follows the file: a `hookd secrets rotate-key` beside the running daemon is picked up within
   * `intervalMs`, so new values are sealed with the new key without a restart.
   */
  follow(intervalMs = 2000): () => void {
    const onChange = () => this.reload();
    watchFile(this.file, { interval: intervalMs, persistent: false }, onChange);
    return () => unwatchFile(this.file, onChange);
  }

  seal(hookId: string, plain: string): string {
    const id = this.set.current;
    const dataKey = randomBytes(32);
    const wrapped = gcmSeal(this.set.keys.get(id)!, dataKey, `${PREFIX}${id}`);
    return `${PREFIX}${id}:${wrapped}:${gcmSeal(dataKey, Buffer.from(plain), `hookd secret\0${hookId}`)}`;
  }

  open(hookId: string, stored: string): string {
    // A plain value is one written before sealing began; start-up seals every one of them, so
    // this is only a row written by an older hookd beside this one.
    if (!isSealed(stored)) return stored;
    const id = sealedKeyId(stored);
    if (!this.hasKey(id)) {
      throw new SecretsKeyError(
        `the secret of ${hookId} is sealed with key ${id}, which the secrets key file ${this.file} does not hold`,
      );
    }
    const [, , wrapped, body] = stored.split(':');
    try {
      const dataKey = gcmOpen(this.set.keys.get(id)!, wrapped ?? '', `${PREFIX}${id}`);
      return gcmOpen(dataKey, body ?? '', `hookd secret\0${hookId}`).toString();
    } catch {
      throw new SecretsKeyError(
        `the stored secret of ${hookId} does not open with key ${id} of ${this.file}: it was changed or belongs to another row`,
      );
    }
  }
}

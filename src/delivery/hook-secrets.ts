import { newSigningSecret, type SigningKeys, secretKey } from '../signing/index.js';
import type { DeliveryStore, HookSecretRecord } from '../store/index.js';

/** Default time a rotated-out secret still signs (beside the new one): 24 h. */
export const DEFAULT_ROTATION_GRACE_MS = 24 * 60 * 60 * 1000;

/**
 * The hooks' signing secrets: created on first use, kept in the store of the hook's kind
 * (`Persist: false` hooks' secrets live in memory only), and cached decoded per hook so that
 * signing an attempt costs one HMAC and no lookup.
 */
export class HookSecrets {
  private readonly keys = new Map<string, SigningKeys>();
  private readonly pending = new Map<string, Promise<HookSecretRecord>>();

  constructor(
    private readonly durable: DeliveryStore,
    private readonly ephemeral: DeliveryStore,
    private readonly graceMs: number = DEFAULT_ROTATION_GRACE_MS,
  ) {}

  /** The cached keys of a hook, if it has signed anything since start. */
  cached(hookId: string): SigningKeys | undefined {
    return this.keys.get(hookId);
  }

  /** The keys to sign a hook's callbacks with, creating the secret on first use. */
  async keysFor(hookId: string, persist: boolean): Promise<SigningKeys> {
    const hit = this.keys.get(hookId);
    if (hit) return hit;
    await this.get(hookId, persist);
    return this.keys.get(hookId)!;
  }

  /** A hook's secret, created (and stored) on first use. */
  get(hookId: string, persist: boolean): Promise<HookSecretRecord> {
    // One creation per hook even when many first callbacks ask at once.
    const inFlight = this.pending.get(hookId);
    if (inFlight) return inFlight;
    const p = this.load(hookId, persist).finally(() => this.pending.delete(hookId));
    this.pending.set(hookId, p);
    return p;
  }

  /**
   * Replaces a hook's secret. The old one keeps signing beside the new one for the grace period,
   * so receivers can switch without losing a callback.
   */
  async rotate(hookId: string, persist: boolean, now: number = Date.now()): Promise<HookSecretRecord> {
    const old = await this.get(hookId, persist);
    const record: HookSecretRecord = {
      hookId,
      secret: newSigningSecret(),
      previous: old.secret,
      previousValidUntil: now + this.graceMs,
    };
    await this.storeFor(persist).putSecret(record);
    this.remember(record);
    return record;
  }

  /** Drops a deleted hook's cached keys (the stores drop the secret with the hook's deliveries). */
  forget(hookId: string): void {
    this.keys.delete(hookId);
  }

  private async load(hookId: string, persist: boolean): Promise<HookSecretRecord> {
    const home = this.storeFor(persist);
    let record = await home.getSecret(hookId);
    if (!record) {
      // A replace that flipped Persist moved the hook across stores; its secret follows it.
      const other = this.storeFor(!persist);
      const moved = await other.getSecret(hookId);
      record = moved ?? { hookId, secret: newSigningSecret(), previous: null, previousValidUntil: null };
      await home.putSecret(record);
      if (moved) await other.deleteSecret(hookId);
    }
    this.remember(record);
    return record;
  }

  private remember(r: HookSecretRecord): void {
    this.keys.set(r.hookId, {
      current: secretKey(r.secret),
      previous: r.previous === null ? undefined : secretKey(r.previous),
      previousValidUntil: r.previousValidUntil ?? 0,
    });
  }

  private storeFor(persist: boolean): DeliveryStore {
    return persist ? this.durable : this.ephemeral;
  }
}

/**
 * The store as the signing secrets see it: in a store shared by several instances a first secret
 * is stored through `sharing.storeFirstSecret`, and the record the secrets module holds is made
 * the stored one, so that instances creating a hook's secret at once all sign with the same. A
 * store of one process has nobody to agree with and is used as it is.
 */
export function agreeOnFirstSecret(store: DeliveryStore): DeliveryStore {
  if (!store.sharing.shared) return store;
  const sharing = store.sharing;
  return new Proxy(store, {
    get(target, key, receiver) {
      if (key !== 'putSecret') return Reflect.get(target, key, receiver);
      return async (record: HookSecretRecord): Promise<void> => {
        if (record.previous !== null) return target.putSecret(record);
        Object.assign(record, await sharing.storeFirstSecret(record));
      };
    },
  });
}

/** The signing secrets as the API and the console use them (`whsec_…` strings). */
export class SigningSecrets {
  constructor(private readonly secrets: HookSecrets) {}

  /** A hook's signing secret (`whsec_…`), created on first use. */
  async secretFor(hookId: string, persist = true): Promise<string> {
    return (await this.secrets.get(hookId, persist)).secret;
  }

  /**
   * Replaces a hook's signing secret; the old one keeps signing beside it until
   * `previousValidUntil` (epoch ms).
   */
  async rotateSecret(
    hookId: string,
    persist = true,
  ): Promise<{ secret: string; previousValidUntil: number }> {
    const r = await this.secrets.rotate(hookId, persist);
    return { secret: r.secret, previousValidUntil: r.previousValidUntil! };
  }
}

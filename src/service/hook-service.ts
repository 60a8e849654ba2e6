import { HookdError } from '../errors/index.js';
import {
  HOOK_ID_SHAPE,
  type Hook,
  type HookConfig,
  isHookName,
  isoTimestamp,
  newHookId,
  type ValidateOptions,
  validateHook,
} from '../hook/index.js';
import { type HookSecretRecord, type HookStore, nameConflict, type PageRequest } from '../store/index.js';

/** Told of every change so the match index follows the stored hooks without a rebuild. */
export interface HookChangeListener {
  hookSaved(hook: Hook): void;
  hookDeleted(id: string): void;
}

export interface HookPage {
  items: Hook[];
  /** The Id to pass as `after` for the next page; absent on the last page. */
  next?: string;
}

/**
 * The hook use cases: create, replace, delete, get, list, for one owner at a time. `Persist: true`
 * hooks go to the durable store and `Persist: false` ones to the in-memory one (gone after a
 * restart, SPEC §6); a replace that flips `Persist` moves the hook across.
 */
export class HookService {
  private readonly listeners: HookChangeListener[] = [];
  private firstSecret: ((hook: Hook) => HookSecretRecord) | undefined;

  constructor(
    private readonly durable: HookStore,
    private readonly ephemeral: HookStore,
    private readonly validation: ValidateOptions = {},
    /** The scope rule for PathPatterns (src/users/pattern-check.ts); throws to refuse. */
    private readonly checkPattern?: (owner: string, pathPattern: string) => Promise<void>,
  ) {}

  /**
   * Makes a new hook's signing secret, which the store writes in the hook's own transaction: the
   * first delivery never waits on a first-use write, and a hook that is refused (a name taken
   * meanwhile, a store fault) leaves no secret behind.
   */
  withFirstSecret(make: (hook: Hook) => HookSecretRecord): void {
    this.firstSecret = make;
  }

  onChange(listener: HookChangeListener): void {
    this.listeners.push(listener);
  }

  /** Every stored hook of every user: what the match index is built from at start. */
  async all(): Promise<Hook[]> {
    const durable = await this.durable.allHooks();
    const ephemeral = await this.ephemeral.allHooks();
    // Usually one of the two is empty: no copy of a 100,000-hook list then.
    if (ephemeral.length === 0) return durable;
    if (durable.length === 0) return ephemeral;
    return durable.concat(ephemeral);
  }

  /**
   * After another process changed the store: forgets in-memory hooks of users that no longer
   * exist and returns every hook, for the match index to be rebuilt from.
   */
  async resync(users: ReadonlySet<string>): Promise<Hook[]> {
    for (const h of await this.ephemeral.allHooks()) {
      if (!users.has(h.Owner)) await this.ephemeral.deleteHook(h.Id);
    }
    return this.all();
  }

  /**
   * Every check of create (with `self`, of replacing that hook): the document, the callback
   * policy, the owner's path scopes and the Name's uniqueness. Create, replace and
   * `/_hookd/validate` all come here, so a hook that passes validation is one create accepts.
   */
  async check(body: unknown, owner: string, self?: string): Promise<HookConfig> {
    const config = await validateHook(body, this.validation, owner);
    await this.checkPattern?.(owner, config.PathPattern);
    await this.checkName(owner, config.Name, self);
    return config;
  }

  async create(owner: string, body: unknown): Promise<Hook> {
    const config = await this.check(body, owner);
    const hook: Hook = {
      Id: newHookId(),
      Owner: owner,
      ...config,
      Modified: isoTimestamp(),
      State: 'active',
    };
    await this.storeFor(hook).putHook(hook, this.firstSecret?.(hook));
    this.emitSaved(hook);
    return hook;
  }

  async replace(owner: string, id: string, body: unknown): Promise<Hook> {
    const existing = await this.get(owner, id);
    const config = await this.check(body, owner, existing.Id);
    // A replace re-enables a hook that a 410 disabled: the owner has pointed it somewhere new.
    const hook: Hook = {
      Id: existing.Id,
      Owner: owner,
      ...config,
      Modified: modifiedAfter(existing.Modified),
      State: 'active',
    };
    await this.storeFor(hook).putHook(hook);
    if (hook.Persist !== existing.Persist) await this.storeFor(existing).deleteHook(existing.Id);
    this.emitSaved(hook);
    return hook;
  }

  async delete(owner: string, id: string): Promise<void> {
    const existing = await this.get(owner, id);
    await this.storeFor(existing).deleteHook(existing.Id);
    for (const l of this.listeners) l.hookDeleted(existing.Id);
  }

  /**
   * The owner's hook by Id or, failing that, by `Name` (`/hooks/{id-or-name}`). Another
   * user's hook is "not found": its existence is not revealed (SPEC §8).
   */
  async get(owner: string, id: string): Promise<Hook> {
    let hook = HOOK_ID_SHAPE.test(id) ? await this.find(id) : undefined;
    if (hook && hook.Owner !== owner) hook = undefined;
    if (!hook && isHookName(id)) hook = await this.findByName(owner, id);
    if (!hook) {
      const what = id.startsWith('hk_') || !isHookName(id) ? 'Id' : 'Id or Name';
      throw new HookdError('NOT_FOUND', `no hook with ${what} "${id.slice(0, 64)}"`);
    }
    return hook;
  }

  /** The owner's hook named `name`, in either store. */
  async findByName(owner: string, name: string): Promise<Hook | undefined> {
    return (
      (await this.durable.getHookByName(owner, name)) ?? (await this.ephemeral.getHookByName(owner, name))
    );
  }

  /**
   * 409 when another of the owner's hooks has the name. The stores' unique indexes back this up
   * within each store; across the durable and the in-memory one this check is what holds.
   */
  private async checkName(owner: string, name: string | undefined, self: string | undefined): Promise<void> {
    if (name === undefined) return;
    const holder = await this.findByName(owner, name);
    if (holder && holder.Id !== self) throw nameConflict(name, holder.Id);
  }

  async find(id: string): Promise<Hook | undefined> {
    return (await this.durable.getHook(id)) ?? (await this.ephemeral.getHook(id));
  }

  /**
   * Sets a hook's state without touching its configuration or Modified: `disabled` with a reason
   * (410 Gone, or auto-disable after sustained failure), `active` to re-enable. Resolves to the
   * hook as stored and whether this call changed it (false when it was in that state already).
   */
  async setState(
    id: string,
    state: Hook['State'],
    reason?: string,
  ): Promise<{ hook: Hook; changed: boolean } | undefined> {
    const hook = await this.find(id);
    if (!hook) return undefined;
    if (hook.State === state) return { hook, changed: false };
    const { DisabledReason: _r, DisabledAt: _a, ...rest } = hook;
    const updated: Hook =
      state === 'disabled'
        ? { ...rest, State: state, DisabledReason: reason ?? 'disabled', DisabledAt: isoTimestamp() }
        : { ...rest, State: state };
    await this.storeFor(updated).putHook(updated);
    this.emitSaved(updated);
    return { hook: updated, changed: true };
  }

  /** Re-enables one of the owner's hooks (`POST /hooks/{id}/enable`); an active one stays as it is. */
  async enable(owner: string, id: string): Promise<Hook> {
    const existing = await this.get(owner, id);
    if (existing.State === 'active') return existing;
    return (await this.setState(existing.Id, 'active'))?.hook ?? existing;
  }

  /** Deletes every hook of `owner` (the user is being removed), telling the listeners of each. */
  async deleteAll(owner: string): Promise<number> {
    let n = 0;
    for (;;) {
      const page = await this.list(owner, { limit: 500 });
      for (const h of page.items) {
        await this.storeFor(h).deleteHook(h.Id);
        for (const l of this.listeners) l.hookDeleted(h.Id);
        n++;
      }
      if (page.next === undefined) return n;
    }
  }

  async list(owner: string, page: PageRequest = {}): Promise<HookPage> {
    // One extra row says whether a next page exists without a count query.
    const want = page.limit === undefined ? undefined : page.limit + 1;
    const sub = want === undefined ? { ...page } : { ...page, limit: want };
    const merged = [
      ...(await this.durable.listHooks(owner, sub)),
      ...(await this.ephemeral.listHooks(owner, sub)),
    ];
    merged.sort((a, b) => (a.Id < b.Id ? -1 : a.Id > b.Id ? 1 : 0));
    if (page.limit === undefined || merged.length <= page.limit) return { items: merged };
    const items = merged.slice(0, page.limit);
    return { items, next: items[items.length - 1]!.Id };
  }

  private storeFor(hook: Hook): HookStore {
    return hook.Persist ? this.durable : this.ephemeral;
  }

  private emitSaved(hook: Hook): void {
    for (const l of this.listeners) l.hookSaved(hook);
  }
}

/**
 * A new `Modified` that is later than the previous one even within the same millisecond: it is
 * the hook's version (its ETag), so two replaces must never share it.
 */
export function modifiedAfter(previous: string | undefined): string {
  const now = Date.now();
  const before = previous === undefined ? Number.NaN : Date.parse(previous);
  return isoTimestamp(new Date(Number.isNaN(before) || now > before ? now : before + 1));
}

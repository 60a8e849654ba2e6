import { existsSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type Conf from 'conf';
import { UsageError } from './exit-codes.js';

/** A saved server and token, created by `hookctl login`. */
export interface Profile {
  server: string;
  token?: string;
}

interface ProfileFile {
  current?: string;
  profiles?: Record<string, Profile>;
}

/** The name `login` uses when no --profile is given. */
export const DEFAULT_PROFILE = 'default';

const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** `$XDG_CONFIG_HOME/hookctl`, else `~/.config/hookctl` (the same on every platform, as gh does). */
export function configDir(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
  const xdg = env.XDG_CONFIG_HOME;
  // The XDG spec says a relative value is invalid and must be ignored.
  const base = xdg?.startsWith('/') ? xdg : join(home, '.config');
  return join(base, 'hookctl');
}

/** Rejects profile names that would be awkward in a file, a shell or a completion list. */
export function checkProfileName(name: string): void {
  if (!PROFILE_NAME.test(name)) {
    throw new UsageError(
      `invalid profile name "${name}": use letters, digits, ".", "_" and "-" (at most 64)`,
    );
  }
}

/**
 * The profile file (`config.json` in the config directory), through `conf`. It holds tokens, so
 * the file is written with mode 0600 and its directory is created 0700.
 */
export class Profiles {
  readonly dir: string;
  readonly #Conf: typeof Conf;
  #conf: Conf<ProfileFile> | undefined;

  private constructor(dir: string, ConfClass: typeof Conf) {
    this.dir = dir;
    this.#Conf = ConfClass;
  }

  /** Loads `conf` on first use only: most runs (HOOKD_URL + HOOKD_TOKEN) never read a profile. */
  static async open(dir: string): Promise<Profiles> {
    const { default: ConfClass } = await import('conf');
    return new Profiles(dir, ConfClass);
  }

  get path(): string {
    return join(this.dir, 'config.json');
  }

  #store(): Conf<ProfileFile> {
    if (!this.#conf) {
      try {
        // conf would create the directory with the default mode; tokens live here, so 0700.
        mkdirSync(this.dir, { recursive: true, mode: 0o700 });
        this.#conf = new this.#Conf<ProfileFile>({
          cwd: this.dir,
          configName: 'config',
          configFileMode: 0o600,
          // Profile names may contain dots; they are keys, not paths.
          accessPropertiesByDotNotation: false,
          clearInvalidConfig: false,
        });
      } catch (e) {
        throw new UsageError(`cannot read the profile file ${this.path}: ${(e as Error).message}`, {
          hint: `fix the file or remove it and log in again (hookctl login)`,
        });
      }
    }
    return this.#conf;
  }

  /**
   * Reading never creates anything: without a profile file there is nothing to read, and a
   * read-only command (list, get, tail …) must not leave ~/.config/hookctl behind.
   */
  #read<K extends keyof ProfileFile>(key: K): ProfileFile[K] | undefined {
    if (!this.#conf && !existsSync(this.path)) return undefined;
    return this.#store().get(key);
  }

  /** The profile `--profile`/`HOOKCTL_PROFILE` did not name explicitly: the one `profile use` chose. */
  current(): string | undefined {
    return this.#read('current');
  }

  get(name: string): Profile | undefined {
    const all = this.#read('profiles') ?? {};
    return Object.hasOwn(all, name) ? all[name] : undefined;
  }

  /** Every profile, sorted by name. */
  list(): { name: string; profile: Profile; current: boolean }[] {
    const all = this.#read('profiles') ?? {};
    const current = this.current();
    return Object.keys(all)
      .sort()
      .map((name) => ({ name, profile: all[name]!, current: name === current }));
  }

  /** Creates or overwrites a profile and makes it the current one. */
  save(name: string, profile: Profile): void {
    checkProfileName(name);
    const store = this.#store();
    const all = { ...(store.get('profiles') ?? {}), [name]: profile };
    store.set({ profiles: all, current: name });
  }

  use(name: string): void {
    if (!this.get(name)) throw this.unknown(name);
    this.#store().set('current', name);
  }

  remove(name: string): void {
    if (!this.get(name)) throw this.unknown(name);
    const store = this.#store();
    const all = { ...(store.get('profiles') ?? {}) };
    delete all[name];
    store.set('profiles', all);
    if (store.get('current') === name) store.delete('current');
  }

  /** The error for a profile name that is not in the file. */
  unknown(name: string): UsageError {
    const names = this.list().map((p) => p.name);
    return new UsageError(`no profile named "${name}"`, {
      hint: names.length
        ? `known profiles: ${names.join(', ')}; create one with: hookctl login --profile ${name}`
        : `create it with: hookctl login --profile ${name}`,
    });
  }
}

import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { type Command, Option } from 'commander';
import { type AdminApi, type ApiToken, type ApiUser, adminApi, readLiveAddress } from '../addr-file/index.js';
import type { HookdConfig } from '../config/index.js';
import { ALL_OPTIONS, ConfigError } from '../config/index.js';
import { openAdminStore, openSecretTables, secretsKeyFile } from '../daemon/index.js';
import { HookdError } from '../errors/index.js';
import { rotateSecretsKey } from '../secrets/index.js';
import type { Store } from '../store/index.js';
import { Accounts } from '../users/index.js';

/** The daemon options that say which store an admin command works on; the others do not apply. */
const STORE_KEYS = new Set(['dataDir', 'databaseUrl']);
/** And the secrets key file, for `hookd secrets …`. */
const SECRETS_KEYS = new Set([...STORE_KEYS, 'secretsKeyFile']);

/**
 * The options of every `hookd user|token …` command: where the store is, resolved exactly as the
 * daemon resolves it (`--config`/`HOOKD_CONFIG`, `HOOKD_*`, `$STATE_DIRECTORY`…), and `--init`.
 * Only these, so each command's `--help` shows its own options, not the daemon's.
 */
function storeOptions(cmd: Command, keys: ReadonlySet<string> = STORE_KEYS): Command {
  cmd.option('-c, --config <file>', "the daemon's JSON config file (also HOOKD_CONFIG)");
  for (const o of ALL_OPTIONS) if (keys.has(o.key)) cmd.addOption(new Option(o.flag, o.description));
  cmd.option('--init', 'create the data dir (mode 0700) if it does not exist yet');
  return cmd;
}

/**
 * A data dir that does not exist is refused unless `--init`: a misspelt `--data-dir`, or a shell
 * whose `$HOME` is not the service's (sudo), would otherwise make a new, empty database that the
 * daemon never reads. A dir made here is 0700: it holds tokens and hooks.
 */
export function ensureDataDir(cfg: HookdConfig, init: boolean): void {
  if (cfg.databaseUrl) return;
  if (existsSync(cfg.dataDir)) return;
  if (!init) {
    throw new ConfigError(
      `the data dir ${cfg.dataDir} does not exist; name the daemon's with --data-dir (or HOOKD_DATA_DIR, --config, $STATE_DIRECTORY), or pass --init to create it`,
    );
  }
  mkdirSync(cfg.dataDir, { recursive: true, mode: 0o700 });
  chmodSync(cfg.dataDir, 0o700);
}

/** `hookd user add|list|remove` and `hookd token create|list|revoke`, for bootstrap and recovery. */
export function addAdminCommands(program: Command, configFrom: (cmd: Command) => HookdConfig): void {
  const withStore = async <T>(cmd: Command, fn: (store: Store) => Promise<T>): Promise<T> => {
    const cfg = configFrom(cmd);
    ensureDataDir(cfg, cmd.opts().init === true);
    const store = await openAdminStore(cfg);
    try {
      return await fn(store);
    } finally {
      await store.close();
    }
  };
  /**
   * On SQLite, a daemon running on the data dir is asked through its API (so that it applies the
   * change itself); only without one is the store written directly. On PostgreSQL every instance
   * follows the database, so the database is written.
   */
  const viaDaemon = async <T>(
    cmd: Command,
    api: (a: AdminApi) => Promise<T>,
    direct: (store: Store) => Promise<T>,
  ): Promise<T> => {
    const cfg = configFrom(cmd);
    if (!cfg.databaseUrl && existsSync(cfg.dataDir)) {
      const live = await readLiveAddress(cfg.dataDir);
      if (live !== undefined) return api(adminApi(live.url, cfg.dataDir));
    }
    return withStore(cmd, direct);
  };
  const seg = encodeURIComponent;

  const user = program
    .command('user')
    .description("manage users in the daemon's store (for bootstrap; a running daemon: hookctl users)");
  storeOptions(user.command('add <name>').description('add a user'))
    .option(
      '--scope <scope>',
      'a path pattern or "own" its hooks may observe (repeatable; default own)',
      (v, p: string[] = []) => [...p, v],
    )
    .action(async (name: string, o: { scope?: string[] }, cmd: Command) => {
      const said = (scopes: readonly string[]) =>
        console.log(
          `added user ${name} (scopes: ${scopes.join(', ')}); create a token for it with: hookd token create ${name}`,
        );
      await viaDaemon(
        cmd,
        async (a) =>
          said(
            (await a.call<ApiUser>('POST', '/users', { Name: name, ...(o.scope && { Scopes: o.scope }) }))
              .Scopes,
          ),
        async (store) => said((await new Accounts(store).addUser(name, o.scope)).scopes ?? []),
      );
    });
  storeOptions(user.command('list').description('list users with their scopes')).action(
    async (_o, cmd: Command) => {
      const users = await viaDaemon(
        cmd,
        async (a) =>
          (await a.call<ApiUser[]>('GET', '/users')).map((u) => [u.Name, u.Created, u.Scopes] as const),
        async (store) => (await store.listUsers()).map((u) => [u.name, u.created, u.scopes ?? []] as const),
      );
      for (const [name, created, scopes] of users) console.log(`${name}\t${created}\t${scopes.join(',')}`);
    },
  );
  storeOptions(user.command('remove <name>').description('remove a user with its tokens and hooks')).action(
    async (name: string, _o, cmd: Command) => {
      await viaDaemon(
        cmd,
        (a) => a.call<void>('DELETE', `/users/${seg(name)}`),
        async (store) => {
          if (!(await store.removeUser(name))) throw new HookdError('NOT_FOUND', `no user "${name}"`);
        },
      );
      console.log(`removed user ${name}, its tokens and its hooks`);
    },
  );

  const token = program
    .command('token')
    .description("manage API tokens in the daemon's store (for bootstrap)");
  storeOptions(token.command('create <user>').description('create a token; it is printed once, on stdout'))
    .option('--label <text>', 'a note to recognise the token by')
    .action(async (name: string, o: { label?: string }, cmd: Command) => {
      const { id, text } = await viaDaemon(
        cmd,
        async (a) => {
          const t = await a.call<ApiToken>('POST', `/users/${seg(name)}/tokens`, { Label: o.label ?? '' });
          return { id: t.Id, text: t.Token ?? '' };
        },
        async (store) => {
          const { record, token } = await new Accounts(store).createToken(name, o.label ?? '');
          return { id: record.id, text: token };
        },
      );
      console.error(`created token ${id} for ${name}; it is shown only now:`);
      console.log(text);
    });
  storeOptions(token.command('list [user]').description('list tokens (ids, never secrets)')).action(
    async (name: string | undefined, _o, cmd: Command) => {
      const tokens = await viaDaemon(
        cmd,
        async (a) => (await apiTokens(a, name)).map((t) => [t.Id, t.User, t.Created, t.Label] as const),
        async (store) =>
          (await store.listTokens(name)).map((t) => [t.id, t.user, t.created, t.label] as const),
      );
      for (const t of tokens) console.log(t.join('\t'));
    },
  );
  storeOptions(token.command('revoke <id...>').description('revoke tokens by id')).action(
    async (ids: string[], _o, cmd: Command) =>
      viaDaemon(
        cmd,
        async (a) => {
          // The API names a token under its user: each id is looked up among every user's.
          const all = await apiTokens(a, undefined);
          for (const id of ids) {
            const t = all.find((x) => x.Id === id);
            if (t === undefined) throw new HookdError('NOT_FOUND', `no token with id "${id}"`);
            await a.call<void>('DELETE', `/users/${seg(t.User)}/tokens/${seg(id)}`);
            console.log(`revoked token ${id}`);
          }
        },
        async (store) => {
          for (const id of ids) {
            if (!(await store.revokeToken(id))) throw new HookdError('NOT_FOUND', `no token with id "${id}"`);
            console.log(`revoked token ${id}`);
          }
        },
      ),
  );

  const secrets = program
    .command('secrets')
    .description('manage the key file that encrypts the stored signing secrets');
  storeOptions(
    secrets
      .command('rotate-key')
      .description(
        'add a new key to the secrets key file and re-encrypt every stored secret with it; running daemons pick the file up within seconds',
      ),
    SECRETS_KEYS,
  ).action(async (_o, cmd: Command) => {
    const cfg = configFrom(cmd);
    ensureDataDir(cfg, false);
    const file = secretsKeyFile(cfg);
    const { tables, close } = await openSecretTables(cfg);
    try {
      const r = await rotateSecretsKey(file, tables);
      console.log(
        `${file}: new key ${r.current}; re-encrypted ${r.resealed} stored secret(s)` +
          (r.retired.length > 0 ? `; retired key(s) no secret used: ${r.retired.join(', ')}` : ''),
      );
    } finally {
      await close();
    }
  });
}

/** One user's tokens through the API, or every user's. */
async function apiTokens(a: AdminApi, user: string | undefined): Promise<ApiToken[]> {
  const users = user !== undefined ? [user] : (await a.call<ApiUser[]>('GET', '/users')).map((u) => u.Name);
  const lists = await Promise.all(
    users.map((u) => a.call<ApiToken[]>('GET', `/users/${encodeURIComponent(u)}/tokens`)),
  );
  return lists.flat();
}

import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Dispatcher } from 'undici';
import { defaultDataDir } from '../util/index.js';
import { ApiClient } from './api-client.js';
import { AuthError, UsageError } from './exit-codes.js';
import { type Format, Output, type OutStream } from './output.js';
import { configDir, type Profile, Profiles } from './profiles.js';

/** The daemon's default address (SPEC §11). */
export const DEFAULT_SERVER = 'http://127.0.0.1:8470';
/** Name of the admin token file in hookd's data directory (SPEC §8). */
export const ADMIN_TOKEN_FILE = 'admin.token';

/** Where the shipped systemd unit keeps hookd's state (StateDirectory=hookd). */
const SYSTEMD_STATE_DIR = '/var/lib/hookd';

/** Standard streams, injected so every command runs the same in tests as at a terminal. */
export interface IOStreams {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };
  stdout: OutStream;
  stderr: OutStream;
}

/** What a hookctl run needs from the outside world. */
export interface CliDeps {
  io: IOStreams;
  env: NodeJS.ProcessEnv;
  /** The home directory (config dir fallback); defaults to os.homedir(). */
  home?: string;
  /**
   * Where the API client's requests go (hookd/client's `dispatcher`): undefined in use; a test's
   * undici MockAgent, to check the requests a command makes and what it prints for given answers.
   */
  dispatcher?: Dispatcher;
  /** Subscribes to SIGINT/SIGTERM; returns the unsubscribe function (tail uses it to exit 0). */
  onSignal?: (handler: (signal: NodeJS.Signals) => void) => () => void;
}

/** The options every command accepts (before or after the command name). */
export interface GlobalOptions {
  server?: string;
  profile?: string;
  output?: Format;
  /** false with --no-color. */
  color: boolean;
  debug: boolean;
}

/** The token to send and where it came from; without one, the error to report on a 401. */
export type Credentials =
  | { token: string; source: string; missing?: undefined }
  | { token: undefined; source: string; missing: AuthError };

/** A resolved server: the URL (with API base, no trailing slash) and why it was chosen. */
export interface ServerChoice {
  url: string;
  source: string;
}

/**
 * Per-run state shared by the commands: global options, the resolved server/token/profile, the
 * output writer and the API clients to close at the end.
 */
export class CliContext {
  readonly deps: CliDeps;
  readonly globals: GlobalOptions;
  #profiles: Promise<Profiles> | undefined;
  readonly #clients: ApiClient[] = [];

  constructor(deps: CliDeps, globals: GlobalOptions) {
    this.deps = deps;
    this.globals = globals;
  }

  get io(): IOStreams {
    return this.deps.io;
  }

  get env(): NodeJS.ProcessEnv {
    return this.deps.env;
  }

  /** The output writer, with the command's default format when `-o` was not given. */
  output(defaultFormat: Format = 'table'): Output {
    return new Output({
      format: this.globals.output ?? defaultFormat,
      out: this.io.stdout,
      err: this.io.stderr,
      env: this.env,
      color: this.globals.color,
    });
  }

  /** --debug lines go to stderr. */
  debug(line: string): void {
    if (this.globals.debug) this.io.stderr.write(`[debug] ${line}\n`);
  }

  profiles(): Promise<Profiles> {
    this.#profiles ??= Profiles.open(configDir(this.env, this.deps.home ?? homedir()));
    return this.#profiles;
  }

  /** `--profile`, else `HOOKCTL_PROFILE`, else the current profile of the file (if any). */
  async profileName(): Promise<{ name: string; explicit: boolean } | undefined> {
    const named = this.globals.profile ?? (this.env.HOOKCTL_PROFILE || undefined);
    if (named !== undefined) return { name: named, explicit: true };
    const current = (await this.profiles()).current();
    return current === undefined ? undefined : { name: current, explicit: false };
  }

  /** The selected profile; a profile named explicitly must exist. */
  async profile(): Promise<{ name: string; profile: Profile } | undefined> {
    const sel = await this.profileName();
    if (!sel) return undefined;
    const profiles = await this.profiles();
    const profile = profiles.get(sel.name);
    if (!profile) {
      if (sel.explicit) throw profiles.unknown(sel.name);
      return undefined;
    }
    return { name: sel.name, profile };
  }

  /** `--server` > `HOOKD_URL` > the profile's server > http://127.0.0.1:8470. */
  async server(): Promise<ServerChoice> {
    if (this.globals.server !== undefined)
      return { url: normalizeServer(this.globals.server, '--server'), source: '--server' };
    if (this.env.HOOKD_URL)
      return { url: normalizeServer(this.env.HOOKD_URL, 'HOOKD_URL'), source: 'HOOKD_URL' };
    const p = await this.profile();
    if (p)
      return { url: normalizeServer(p.profile.server, `profile ${p.name}`), source: `profile ${p.name}` };
    return { url: DEFAULT_SERVER, source: 'the default' };
  }

  /**
   * `HOOKD_TOKEN` > the profile's token > for a daemon on this machine its `admin.token`. A
   * profile's token is only sent to that profile's own server: `--server elsewhere` must not
   * leak it to another host.
   */
  async token(server: string): Promise<Credentials> {
    const looked: string[] = [];
    const envToken = this.env.HOOKD_TOKEN?.trim();
    if (envToken) return { token: envToken, source: 'HOOKD_TOKEN' };
    looked.push('HOOKD_TOKEN is not set');

    const profiles = await this.profiles();
    const p = await this.profile();
    if (p?.profile.token && sameServer(p.profile.server, server)) {
      return { token: p.profile.token, source: `profile ${p.name} (${profiles.path})` };
    }
    if (!p) looked.push(`no profile in ${profiles.path}`);
    else if (!p.profile.token) looked.push(`profile ${p.name} has no token`);
    else looked.push(`profile ${p.name} is for ${p.profile.server}, not ${server}`);

    if (isLoopback(server)) {
      // The user's own daemon first; then the systemd unit's StateDirectory (readable by root).
      const dirs = this.env.HOOKD_DATA_DIR
        ? [resolve(this.env.HOOKD_DATA_DIR)]
        : [...new Set([defaultDataDir(this.adminEnv()), SYSTEMD_STATE_DIR])];
      for (const dir of dirs) {
        const file = join(dir, ADMIN_TOKEN_FILE);
        try {
          const token = readFileSync(file, 'utf8').trim();
          if (token) return { token, source: file };
          looked.push(`${file} is empty`);
        } catch (e) {
          const code = (e as NodeJS.ErrnoException).code;
          looked.push(
            code === 'ENOENT'
              ? `${file} does not exist`
              : code === 'EACCES'
                ? `${file} is not readable by this user (it belongs to the user hookd runs as)`
                : `${file}: ${(e as Error).message}`,
          );
        }
      }
    } else {
      looked.push(`${server} is not on this machine, so hookd's admin.token was not tried`);
    }
    return {
      token: undefined,
      source: 'nowhere',
      missing: new AuthError(
        `no API token for ${server}; looked at: ${looked.join('; ')}`,
        'run hookctl login (it reads the token from standard input) or set HOOKD_TOKEN; for a local hookd, point HOOKD_DATA_DIR at its data directory',
      ),
    };
  }

  /** hookd's default data dir depends on HOME too; keep the injected home in tests. */
  private adminEnv(): NodeJS.ProcessEnv {
    return this.deps.home && !this.env.XDG_STATE_HOME && !this.env.STATE_DIRECTORY
      ? { ...this.env, XDG_STATE_HOME: join(this.deps.home, '.local', 'state') }
      : this.env;
  }

  /**
   * An API client for the resolved server and token. Without a token it still connects, so that a
   * daemon that is down is reported as such (exit 3); the server's 401 then becomes the
   * "no token found, looked at …" error (exit 4).
   */
  async client(): Promise<ApiClient> {
    const server = await this.server();
    this.debug(`server ${server.url} (from ${server.source})`);
    const creds = await this.token(server.url);
    this.debug(creds.token === undefined ? 'no token found' : `token from ${creds.source}`);
    const client = new ApiClient({
      server: server.url,
      token: creds.token,
      tokenSource: creds.source,
      ...(creds.missing && { missingToken: creds.missing }),
      ...(this.globals.debug && { debug: (line: string) => this.debug(line) }),
      ...(this.deps.dispatcher !== undefined && { dispatcher: this.deps.dispatcher }),
    });
    this.#clients.push(client);
    return client;
  }

  /** Closes what the run opened (HTTP connection pools). */
  async close(): Promise<void> {
    await Promise.allSettled(this.#clients.map((c) => c.close()));
  }
}

/** Checks a server URL and drops a trailing slash: `http(s)://host[:port][/api-base]`. */
export function normalizeServer(text: string, from: string): string {
  const url = URL.canParse(text) ? new URL(text) : undefined;
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname) {
    throw new UsageError(`${from}: "${text}" is not an http:// or https:// URL`, {
      hint: 'for example --server http://127.0.0.1:8470 or --server https://hooks.example.com/api',
    });
  }
  if (url.username || url.password || url.search || url.hash) {
    throw new UsageError(`${from}: the server URL must not contain credentials, a query or a fragment`);
  }
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
}

function sameServer(a: string, b: string): boolean {
  try {
    return normalizeServer(a, 'profile') === normalizeServer(b, 'server');
  } catch {
    return false;
  }
}

/** A server on this machine: the only kind whose admin.token hookctl may read. */
export function isLoopback(server: string): boolean {
  const host = new URL(server).hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) return host === '::1' || /^::ffff:127\./i.test(host) || /^::ffff:7f/i.test(host);
  return false;
}

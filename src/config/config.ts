/** The daemon's configuration after flags, `HOOKD_*` variables, the config file and defaults are merged. */
export interface HookdConfig {
  /** Where the API and proxy listen: an address, or a unix socket (`--listen unix:PATH`). */
  listen: ListenAddress;
  /** The service hookd sits in front of; absent: API only, other paths answer 404. */
  upstream?: string;
  /** State directory: the SQLite store and admin.token live here. */
  dataDir: string;
  /** Prefix of the management API, `/` or e.g. `/api` (no trailing slash). */
  apiBase: string;
  /** The events switch: when off the API answers 503 and no hook fires; the proxy keeps proxying. */
  eventsEnabled: boolean;
  /** CIDRs that callbacks may reach beyond the globally routable internet. */
  allowCallbackNets: string[];
  /** Absolute base URL used for $REQUEST_URI instead of the request's own scheme and host. */
  publicBaseUrl?: string;
  /** Addresses (or CIDRs) whose X-Forwarded-Proto/-Host are believed for $REQUEST_URI. */
  trustedProxies: string[];
  /** Largest API request body in bytes (413 above it). */
  bodyLimit: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** How long SIGTERM waits for in-flight requests and attempts before exiting. */
  shutdownTimeoutMs: number;
  /** Upstream response deadline: 504 after it. */
  upstreamTimeoutMs: number;
  /** Delivery retry schedule in seconds (entry 0 before the first attempt); absent: Standard Webhooks. */
  retrySchedule?: number[];
  /**
   * A PostgreSQL URL (`postgres://user:password@host:5432/db`): hooks, users, tokens and
   * deliveries go to that database instead of the SQLite file in the data dir, and several hookd
   * instances may share it (a cluster, docs/DECISIONS.md "Cluster (PostgreSQL)"). Holds a
   * password: never log it unredacted (`redactDatabaseUrl`).
   */
  databaseUrl?: string;
  /**
   * With `databaseUrl`: how long an instance's claim on its deliveries lasts without a heartbeat,
   * ms. When it runs out (the instance died or lost the database) the others take them over.
   */
  clusterLeaseMs?: number;
  /**
   * Query parameters whose values are replaced by `REDACTED` in `$REQUEST_URI` (and so in stored
   * deliveries and the tail); empty: nothing is redacted. Names compare case-insensitively.
   */
  redactQueryParams: string[];
  /** `--identity-jwt-jwks-url`: Bearer JWTs are verified with the keys of this JWKS. */
  identityJwtJwksUrl?: string;
  /** `--identity-jwt-key-file`: a PEM public key (SPKI or certificate) instead of a JWKS. */
  identityJwtKeyFile?: string;
  /** The JWT `iss` required, if set. */
  identityJwtIssuer?: string;
  /** The JWT `aud` required, if set. */
  identityJwtAudience?: string;
  /** The JWT claim naming the user (default `sub`). */
  identityJwtUserClaim?: string;
  /** The JWT claim whose scopes replace the user's stored ones. */
  identityJwtScopesClaim?: string;
  /** `--identity-header`: the header a trusted proxy names the user in. */
  identityHeader?: string;
  /** `--identity-forward-url`: the forward-auth endpoint. */
  identityForwardUrl?: string;
  /** The forward-auth response header naming the user (default `X-User`). */
  identityForwardUserHeader?: string;
  /** How long a forward-auth answer is reused for the same credentials (default 30 s). */
  identityForwardTtlMs?: number;
  /** Forward-auth deadline (default 5 s). */
  identityForwardTimeoutMs?: number;
  /** Refuse API callers a provider identifies but who were never added, instead of creating them. */
  identityRefuseUnknownUsers?: boolean;
  /** The web console under `{apiBase}/_hookd/console/` (default on; `--no-console` turns it off). */
  consoleEnabled: boolean;
  /**
   * `--workers N` (issue 23, src/workers/): event loops serving the proxy on the shared socket;
   * `auto` is resolved at load to os.availableParallelism(). 1 (the default): one process.
   */
  workers?: number;
  /** Callback attempts in flight at once over all hosts (default 256). */
  deliveryConcurrency?: number;
  /** Callback attempts in flight at once to one host: scheme, host, port (default 32). */
  deliveryPerHost?: number;
  /** Callback attempts in flight at once to one endpoint (callback URL) inside its host (default 8). */
  deliveryPerEndpoint?: number;
  /** Deliveries kept in memory while the store refuses writes (default 10,000); more are dropped. */
  storeFaultBuffer?: number;
  /**
   * Auto-disable: a hook whose every attempt failed for at least this long, ms, and at least
   * `autoDisableFailures` times is disabled; 0 turns auto-disable off (default 5 days).
   */
  autoDisableAfterMs?: number;
  /** Auto-disable: failed attempts in a row needed as well (default 10). */
  autoDisableFailures?: number;
  /** How long an `Idempotency-Key` of `POST /_hookd/report` and its answer are kept, ms (default 24 h). */
  idempotencyTtlMs: number;
  /**
   * OpenTelemetry tracing: true or false forces it on or off; absent, the standard `OTEL_*`
   * variables decide (on when an OTLP endpoint is set, off with `OTEL_SDK_DISABLED=true`).
   */
  tracing?: boolean;
  /** OTLP/HTTP traces endpoint (`…/v1/traces`); absent: `OTEL_EXPORTER_OTLP_*` or the SDK default. */
  tracingEndpoint?: string;
  /**
   * Where /metrics, /healthz and /readyz are served, apart from the proxied service's port;
   * `false` when switched off (`--ops-listen off`).
   */
  opsListen: { host: string; port: number } | false;
  /**
   * Where the web console is served, on an origin of its own (issue 22): no upstream page shares
   * its origin. `false` when switched off (`--console-listen off`). Default 127.0.0.1:8472.
   */
  consoleListen?: { host: string; port: number } | false;
  /** Serve the console under the proxied origin too (`--console-on-proxy`; the old place, opt-in). */
  consoleOnProxy?: boolean;
  /** `--listen unix:PATH`: the socket file's mode (default 0660) and group (default: hookd's). */
  listenMode?: number;
  listenGroup?: string;
  /** Log lines: `auto` pretty and coloured on a terminal, JSON otherwise; or always one of them. */
  logFormat: 'auto' | 'json' | 'pretty';
  /** Issue 24: the forward proxy every callback and notification leaves through (`http(s)://[user:pass@]host:port`). */
  callbackProxy?: string;
  /** Issue 24: a file holding the proxy's `user:password` (one line), instead of the URL's. */
  callbackProxyCredentialsFile?: string;
  /** Issue 24: endpoint verification of hooks without their own `Verification` (default `off`). */
  callbackVerification?: 'off' | 'cloudevents';
  /** The config file these values came from, if any (reloads read it again). */
  configFile?: string;
}

export const DEFAULT_LISTEN = '127.0.0.1:8470';

/** The operations listener's default: loopback, the port after the service's. */
export const DEFAULT_OPS_LISTEN = '127.0.0.1:8471';

/** The console listener's default: loopback, the port after the operations listener's. */
export const DEFAULT_CONSOLE_LISTEN = '127.0.0.1:8472';

/** Default `clusterLeaseMs`: failover after 10 s of silence, tolerant of a short database hiccup. */
export const DEFAULT_CLUSTER_LEASE_MS = 10_000;

/** Default `idempotencyTtlMs`: 24 h, as Stripe keeps keys and the IETF draft's examples assume. */
export const DEFAULT_IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;

/**
 * Where hookd listens: a TCP address, or a unix socket path whose peers are trusted as the front
 * proxy (issue 22: a proxy on the same host without trusting every local process).
 */
export type ListenAddress = { host: string; port: number } | { path: string };

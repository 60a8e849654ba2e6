/**
 * Every field name a hookd log line may carry, one naming scheme for all of them
 * (docs/DECISIONS.md "Log lines"): camelCase; `status` for an HTTP status, `durationMs` for a
 * duration, `err` for an error (pino's name: an Error object is serialized, a string kept), `path`
 * for a request path without its query, counts as plural nouns (`hooks`, `deliveries`).
 * A test reads every log call in src/ and the lines of a running daemon against this list.
 */
export const LOG_FIELDS = {
  // pino and Fastify
  level: 'fatal, error, warn, info, debug or trace',
  time: 'ISO 8601 time of the line',
  msg: 'what happened, one sentence',
  service: 'always "hookd"',
  reqId: 'id of an API request (Fastify), on every line about it',
  // requests: API, proxied, upstream failures
  method: 'HTTP method of a request',
  path: 'request path, never the query string (it may hold a token)',
  status: 'HTTP status: of an API or proxied response, or a receiver’s answer to a callback',
  durationMs: 'how long a request or callback attempt took, milliseconds',
  hooks: 'how many hooks: fired by a request, or in the match index',
  peer: 'address of the client whose request HTTP parsing refused',
  requestLine: 'the request line of a request HTTP parsing refused (control characters escaped)',
  // start and stop
  version: 'hookd version',
  url: 'base URL hookd listens on (the API and the proxy)',
  opsUrl: 'base URL of the operations listener (/metrics, /healthz, /readyz), null when off',
  consoleUrl: "base URL of the web console's own listener, null when off",
  permissions: "a user's permissions (report, portal)",
  upstream: 'the upstream service URL (logs only, never in a response)',
  dataDir: 'the data directory',
  store: 'where the data is kept: the SQLite file, or the database URL without its password',
  apiBase: 'the API base path',
  events: 'whether events are on',
  signal: 'the signal that stops hookd',
  drainMs: 'the drain deadline when stopping',
  user: 'a user name',
  file: 'a file hookd wrote',
  applied: 'reload: options now in force',
  restartRequired: 'reload: options that need a restart',
  // hooks and deliveries
  hookId: 'Id of a hook',
  owner: 'owner (user) of a hook',
  deliveryId: 'Id of a delivery',
  attempt: 'number of a callback attempt (1 for the first)',
  outcome: 'result of an attempt: succeeded, retrying or failed',
  test: 'true on the lines of a test event (the console’s "Send a test event")',
  count: 'how many items the message is about',
  pending: 'deliveries pending at start',
  removed: 'delivery-log entries pruned',
  inFlight: 'attempts still running at shutdown',
  deliveries: 'how many deliveries the message is about',
  updates: 'how many delivery updates the message is about',
  err: 'an error: message (and stack for an Error)',
  sources: 'which stores refuse writes',
  buffer: 'size of the store-fault buffer',
  // cluster and database
  instance: 'this instance’s id in a cluster',
  instances: 'ids of other instances',
  previous: 'the id an instance had before',
  leaseMs: 'cluster lease length',
  first: 'whether this instance started the cluster',
  cleared: 'what a first instance cleared at start',
  why: 'why a lease was lost, or a portal link was refused (used, expired)',
  released: 'deliveries let go when the lease was lost',
  dropped: 'tail events dropped',
  database: 'database URL without its password',
  versions: 'schema versions migrated',
  channel: 'PostgreSQL notification channel',
  retryMs: 'delay before a retry',
  table: 'database table',
  // identity providers
  provider: 'the identity provider in use (jwt, header, forward)',
  header: 'the identity header trusted for the user name',
  refuseUnknownUsers: 'whether users the store does not know are refused',
  reason: 'why a request’s user could not be established',
  // users, notifications, idempotency, tracing
  tokenId: 'Id of an API token (never the token)',
  scopes: 'a user’s scopes, or what a portal link allows',
  users: 'how many users the message is about',
  migrated: 'how many records a migration changed',
  key: 'an Idempotency-Key of a report',
  endpoints: 'how many notification endpoints',
  endpoint: 'a notification endpoint, or the tracing (OTLP) endpoint URL',
  endpointId: 'Id of a notification endpoint',
  type: 'type of a notification event',
  cause: 'why a notification was sent',
  transition: 'a breaker or hook state change a notification reports',
  sampler: 'the tracing sampler',
  // lifecycle, hookctl listen, workers
  part: 'a part of the daemon being started or stopped (lifecycle)',
  listener: 'Id of a `hookctl listen` connection',
  workers: 'how many worker processes (--workers)',
  worker: 'a worker process (its id or pid)',
  code: 'exit code of a worker process',
  restartInMs: 'delay before a crashed worker is replaced',
  // the embeddable portal
  by: 'the user who made a portal link',
  readOnly: 'whether a portal session can change nothing',
  ttlMs: 'how long a portal link may be opened, milliseconds',
  // client certificates
  notAfter: "when a hook's client certificate ends (ISO 8601)",
} as const;

export type LogField = keyof typeof LOG_FIELDS;

export const LOG_FIELD_NAMES: ReadonlySet<string> = new Set(Object.keys(LOG_FIELDS));

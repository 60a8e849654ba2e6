import { IDENTITY_OPTIONS } from './identity-options.js';
import { asBool, asList, asNumber, asText, type OptionSpec } from './option-spec.js';

export { IDENTITY_OPTIONS } from './identity-options.js';
export type { OptionSpec } from './option-spec.js';

export const OPTIONS: readonly OptionSpec[] = [
  {
    key: 'listen',
    fileKey: 'listen',
    flag: '--listen <host:port>',
    env: 'HOOKD_LISTEN',
    description:
      'address to listen on (default 127.0.0.1:8470), or unix:PATH for a socket whose peers are trusted as the front proxy',
    fromText: asText,
  },
  {
    key: 'upstream',
    fileKey: 'upstream',
    flag: '--upstream <url>',
    env: 'HOOKD_UPSTREAM',
    description: 'the HTTP service to proxy requests to',
    fromText: asText,
  },
  {
    key: 'dataDir',
    fileKey: 'dataDir',
    flag: '--data-dir <dir>',
    env: 'HOOKD_DATA_DIR',
    description: 'state directory (default $STATE_DIRECTORY, $XDG_STATE_HOME/hookd, ~/.local/state/hookd)',
    fromText: asText,
  },
  {
    key: 'apiBase',
    fileKey: 'apiBase',
    flag: '--api-base <path>',
    env: 'HOOKD_API_BASE',
    description: 'path prefix of the management API (default /)',
    fromText: asText,
  },
  {
    key: 'eventsEnabled',
    reload: 'hot',
    fileKey: 'events.enabled',
    flag: '--no-events',
    env: 'HOOKD_EVENTS',
    description: 'disable events: the API answers 503 and no hook fires',
    fromText: asBool,
  },
  {
    key: 'allowCallbackNets',
    reload: 'hot',
    fileKey: 'allowCallbackNets',
    flag: '--allow-callback-net <cidr>',
    env: 'HOOKD_ALLOW_CALLBACK_NET',
    description: 'let callbacks reach this network (repeatable)',
    fromText: asList,
    repeatable: true,
  },
  {
    key: 'publicBaseUrl',
    reload: 'hot',
    fileKey: 'publicBaseUrl',
    flag: '--public-base-url <url>',
    env: 'HOOKD_PUBLIC_BASE_URL',
    description: 'scheme and host used for $REQUEST_URI',
    fromText: asText,
  },
  {
    key: 'trustedProxies',
    reload: 'hot',
    fileKey: 'trustedProxies',
    flag: '--trusted-proxy <cidr>',
    env: 'HOOKD_TRUSTED_PROXIES',
    description: 'peer whose X-Forwarded-* headers are trusted (repeatable)',
    fromText: asList,
    repeatable: true,
  },
  {
    key: 'bodyLimit',
    fileKey: 'bodyLimit',
    flag: '--body-limit <bytes>',
    env: 'HOOKD_BODY_LIMIT',
    description: 'largest API request body (default 1048576)',
    fromText: asNumber,
  },
  {
    key: 'logLevel',
    reload: 'hot',
    fileKey: 'logLevel',
    flag: '--log-level <level>',
    env: 'HOOKD_LOG_LEVEL',
    description: 'fatal, error, warn, info (default), debug, trace or silent',
    fromText: asText,
  },
  {
    key: 'shutdownTimeoutMs',
    reload: 'hot',
    fileKey: 'shutdownTimeoutMs',
    flag: '--shutdown-timeout <ms>',
    env: 'HOOKD_SHUTDOWN_TIMEOUT_MS',
    description: 'drain deadline on SIGTERM (default 10000)',
    fromText: asNumber,
  },
  {
    key: 'upstreamTimeoutMs',
    fileKey: 'upstreamTimeoutMs',
    flag: '--upstream-timeout <ms>',
    env: 'HOOKD_UPSTREAM_TIMEOUT_MS',
    description: 'upstream response deadline, 504 after it (default 60000)',
    fromText: asNumber,
  },
  {
    key: 'retrySchedule',
    fileKey: 'retrySchedule',
    flag: '--retry-schedule <delays>',
    env: 'HOOKD_RETRY_SCHEDULE',
    description:
      'delays before each delivery attempt, e.g. 0,5s,5m,30m,2h (default: Standard Webhooks, 0,5s,5m,30m,2h,5h,10h,14h,20h,24h)',
    fromText: asList,
  },
  // Issue 12: what hook owners may see of other users' requests.
  {
    key: 'redactQueryParams',
    reload: 'hot',
    fileKey: 'redactQueryParams',
    flag: '--redact-query-params <names>',
    env: 'HOOKD_REDACT_QUERY_PARAMS',
    description:
      'query parameters whose values become REDACTED in $REQUEST_URI, deliveries and the tail (default access_token,api_key,apikey,token,password,secret,sig,signature,key; "" or none: off)',
    fromText: asList,
  },
  // Issue 16: hooks that keep failing are switched off, and their owners told.
  {
    key: 'autoDisableAfterMs',
    fileKey: 'autoDisable.after',
    flag: '--auto-disable-after <duration>',
    env: 'HOOKD_AUTO_DISABLE_AFTER',
    description:
      'disable a hook whose every attempt failed for this long (and --auto-disable-failures times), e.g. 5d, 12h; 0 turns it off (default 5d)',
    fromText: asText,
  },
  {
    key: 'autoDisableFailures',
    fileKey: 'autoDisable.failures',
    flag: '--auto-disable-failures <n>',
    env: 'HOOKD_AUTO_DISABLE_FAILURES',
    description: 'failed attempts in a row needed as well before a hook is auto-disabled (default 10)',
    fromText: asNumber,
  },
  {
    key: 'consoleEnabled',
    fileKey: 'console.enabled',
    flag: '--no-console',
    env: 'HOOKD_CONSOLE',
    description: 'turn off the web console (served under /_hookd/console/ by default)',
    fromText: asBool,
  },
];

/** The options of a cluster on PostgreSQL. */
export const CLUSTER_OPTIONS: readonly OptionSpec[] = [
  {
    key: 'databaseUrl',
    fileKey: 'databaseUrl',
    flag: '--database-url <url>',
    env: 'HOOKD_DATABASE_URL',
    description:
      'PostgreSQL URL (postgres://user:pass@host/db) instead of SQLite; several hookd may share it (also HOOKD_DATABASE_URL_FILE)',
    fromText: asText,
  },
  {
    key: 'workers',
    fileKey: 'workers',
    flag: '--workers <n|auto>',
    env: 'HOOKD_WORKERS',
    description: 'event loops serving the proxy on one socket; auto = the usable cores (default 1)',
    fromText: (t: string): unknown => (t.trim().toLowerCase() === 'auto' ? 'auto' : asNumber(t)),
  },
  {
    key: 'clusterLeaseMs',
    fileKey: 'cluster.leaseMs',
    flag: '--cluster-lease <ms>',
    env: 'HOOKD_CLUSTER_LEASE_MS',
    description: 'with --database-url: how long a silent instance keeps its deliveries (default 10000)',
    fromText: asNumber,
  },
];

/** Delivery limits (isolation per endpoint, protection per host) and the store-fault buffer. */
export const DELIVERY_OPTIONS: readonly OptionSpec[] = [
  {
    key: 'deliveryConcurrency',
    fileKey: 'delivery.concurrency',
    flag: '--delivery-concurrency <n>',
    env: 'HOOKD_DELIVERY_CONCURRENCY',
    description: 'callback attempts in flight at once, over all hosts (default 256)',
    fromText: asNumber,
  },
  {
    key: 'deliveryPerHost',
    fileKey: 'delivery.perHost',
    flag: '--delivery-per-host <n>',
    env: 'HOOKD_DELIVERY_PER_HOST',
    description: 'callback attempts in flight at once to one host (scheme, host, port) (default 32)',
    fromText: asNumber,
  },
  {
    key: 'deliveryPerEndpoint',
    fileKey: 'delivery.perEndpoint',
    flag: '--delivery-per-endpoint <n>',
    env: 'HOOKD_DELIVERY_PER_ENDPOINT',
    description:
      'callback attempts in flight at once to one endpoint (callback URL), inside its host (default 8)',
    fromText: asNumber,
  },
  {
    key: 'storeFaultBuffer',
    fileKey: 'delivery.faultBuffer',
    flag: '--store-fault-buffer <n>',
    env: 'HOOKD_STORE_FAULT_BUFFER',
    description:
      'fired callbacks kept in memory while the store refuses writes; more are dropped and counted (default 10000)',
    fromText: asNumber,
  },
];

/** Issue 16: idempotent reports and OpenTelemetry tracing. */
export const OPERATOR_OPTIONS: readonly OptionSpec[] = [
  {
    key: 'idempotencyTtlMs',
    fileKey: 'idempotency.ttl',
    flag: '--idempotency-ttl <duration>',
    env: 'HOOKD_IDEMPOTENCY_TTL',
    description:
      'how long an Idempotency-Key of POST /_hookd/report and its answer are kept: seconds or 30m, 24h, 7d (default 24h)',
    fromText: asText,
  },
  {
    key: 'tracing',
    fileKey: 'tracing.enabled',
    flag: '--tracing <on|off>',
    env: 'HOOKD_TRACING',
    description:
      'OpenTelemetry traces over OTLP/HTTP (default: on when OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set, unless OTEL_SDK_DISABLED=true)',
    fromText: asBool,
  },
  {
    key: 'tracingEndpoint',
    fileKey: 'tracing.endpoint',
    flag: '--tracing-endpoint <url>',
    env: 'HOOKD_TRACING_ENDPOINT',
    description:
      'OTLP/HTTP traces URL, e.g. http://127.0.0.1:4318/v1/traces (default: the OTEL_EXPORTER_OTLP_* variables)',
    fromText: asText,
  },
];

/** The operations listener (issue 14): metrics and health probes apart from the proxied service. */
export const OPS_OPTIONS: readonly OptionSpec[] = [
  {
    key: 'opsListen',
    fileKey: 'opsListen',
    flag: '--ops-listen <host:port>',
    env: 'HOOKD_OPS_LISTEN',
    description: 'address of /metrics, /healthz, /readyz (default 127.0.0.1:8471; off to disable)',
    fromText: asText,
  },
  {
    key: 'consoleListen',
    fileKey: 'console.listen',
    flag: '--console-listen <host:port>',
    env: 'HOOKD_CONSOLE_LISTEN',
    description: 'address of the web console, an origin of its own (default 127.0.0.1:8472; off to disable)',
    fromText: asText,
  },
  {
    key: 'consoleOnProxy',
    fileKey: 'console.onProxy',
    flag: '--console-on-proxy',
    env: 'HOOKD_CONSOLE_ON_PROXY',
    description:
      "also serve the console under the proxied origin's /_hookd/console/ (shares the upstream's origin)",
    fromText: asBool,
  },
  {
    key: 'listenMode',
    fileKey: 'listenMode',
    flag: '--listen-mode <mode>',
    env: 'HOOKD_LISTEN_MODE',
    description: 'with --listen unix:PATH: the socket file mode, octal (default 0660)',
    fromText: asText,
  },
  {
    key: 'listenGroup',
    fileKey: 'listenGroup',
    flag: '--listen-group <group>',
    env: 'HOOKD_LISTEN_GROUP',
    description: "with --listen unix:PATH: the socket file's group, a name or number (e.g. www-data)",
    fromText: asText,
  },
  {
    key: 'logFormat',
    fileKey: 'logFormat',
    flag: '--log-format <format>',
    env: 'HOOKD_LOG_FORMAT',
    description: 'auto (default: pretty on a terminal, JSON otherwise), json or pretty',
    fromText: asText,
  },
];

/** Issue 24: delivery semantics (src/egress/, src/verification/). */
export const SEMANTICS_OPTIONS: readonly OptionSpec[] = [
  {
    key: 'callbackProxy',
    fileKey: 'callbackProxy',
    flag: '--callback-proxy <url>',
    env: 'HOOKD_CALLBACK_PROXY',
    description:
      'forward proxy every callback and notification goes through (HTTP CONNECT), e.g. http://user:pass@proxy:3128',
    fromText: asText,
  },
  {
    key: 'callbackProxyCredentialsFile',
    fileKey: 'callbackProxyCredentialsFile',
    flag: '--callback-proxy-credentials-file <file>',
    env: 'HOOKD_CALLBACK_PROXY_CREDENTIALS_FILE',
    description: "file holding the callback proxy's user:password (one line), instead of the URL's",
    fromText: asText,
  },
  {
    key: 'callbackVerification',
    fileKey: 'callbackVerification',
    flag: '--callback-verification <mode>',
    env: 'HOOKD_CALLBACK_VERIFICATION',
    description:
      "off (default) or cloudevents: the CloudEvents validation handshake before a callback origin's first delivery, for hooks without their own Verification",
    fromText: asText,
  },
];

/** Every daemon option: what flags, `HOOKD_*` variables and config file keys are read from (man hookd lists them all). */
export const ALL_OPTIONS: readonly OptionSpec[] = [
  ...OPTIONS,
  ...CLUSTER_OPTIONS,
  ...DELIVERY_OPTIONS,
  ...IDENTITY_OPTIONS,
  ...OPERATOR_OPTIONS,
  ...OPS_OPTIONS,
  ...SEMANTICS_OPTIONS,
];

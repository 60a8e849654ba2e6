import { asBool, asText, type CrossCheck, type OptionSpec, refuse } from './spec.js';
import { durationMs, isHttpUrl, listenerOrOff, oneOf, text, trueOrFalse } from './values.js';

/** The operations listener's default: loopback, the port after the service's. */
export const DEFAULT_OPS_LISTEN = '127.0.0.1:8471';

/** The console listener's default: loopback, the port after the operations listener's. */
export const DEFAULT_CONSOLE_LISTEN = '127.0.0.1:8472';

const idempotencyTtl = durationMs(
  1,
  30 * 86400,
  'must be seconds or a duration like 30m, 24h, 7d (from 1s to 30d)',
);

function socketMode(v: unknown): number {
  const s = text(v);
  if (!/^0?[0-7]{3}$/.test(s.trim())) refuse(`"${s}" is not an octal file mode such as 0660`);
  return Number.parseInt(s.trim(), 8);
}

function groupName(v: unknown): string {
  const s = text(v);
  return /^[A-Za-z0-9_][A-Za-z0-9._-]{0,31}$/.test(s) ? s : refuse(`"${s}" is not a group name or number`);
}

/** Default `idempotency.ttl`: 24 h, as Stripe keeps keys and the IETF draft's examples assume. */
const DEFAULT_IDEMPOTENCY_TTL = '24h';
export const DEFAULT_IDEMPOTENCY_TTL_MS = idempotencyTtl(DEFAULT_IDEMPOTENCY_TTL);

function tracingEndpoint(v: unknown): string {
  return typeof v === 'string' && isHttpUrl(v)
    ? v
    : refuse('must be an absolute http:// or https:// URL such as http://127.0.0.1:4318/v1/traces');
}

/** The operations listener, the console's listener, the service socket and the logs. */
export const OPS_OPTIONS = {
  /**
   * Where /metrics, /healthz and /readyz are served, apart from the proxied service's port;
   * `false` when switched off (`--ops-listen off`; `"opsListen": false` in the file).
   */
  opsListen: {
    fileKey: 'opsListen',
    flag: '--ops-listen <host:port>',
    env: 'HOOKD_OPS_LISTEN',
    description: 'address of /metrics, /healthz, /readyz (default 127.0.0.1:8471; off to disable)',
    fromText: asText,
    parse: listenerOrOff('127.0.0.1:8471'),
    default: DEFAULT_OPS_LISTEN,
  },
  /**
   * Where the web console is served, on an origin of its own: no upstream page shares
   * its origin. `false` when switched off (`--console-listen off`).
   */
  consoleListen: {
    fileKey: 'console.listen',
    flag: '--console-listen <host:port>',
    env: 'HOOKD_CONSOLE_LISTEN',
    description: 'address of the web console, an origin of its own (default 127.0.0.1:8472; off to disable)',
    fromText: asText,
    parse: listenerOrOff('127.0.0.1:8472'),
    default: DEFAULT_CONSOLE_LISTEN,
  },
  /**
   * Serve the console under the proxied origin too (`--console-on-proxy`): opt-in, since the
   * console then shares its origin with the service's pages.
   */
  consoleOnProxy: {
    fileKey: 'console.onProxy',
    flag: '--console-on-proxy',
    env: 'HOOKD_CONSOLE_ON_PROXY',
    description:
      "also serve the console under the proxied origin's /_hookd/console/ (shares the upstream's origin)",
    fromText: asBool,
    parse: trueOrFalse(),
    default: false,
  },
  /** `--listen unix:PATH`: the socket file's mode (default 0660, applied by the listener). */
  listenMode: {
    fileKey: 'listenMode',
    flag: '--listen-mode <mode>',
    env: 'HOOKD_LISTEN_MODE',
    description: 'with --listen unix:PATH: the socket file mode, octal (default 0660)',
    fromText: asText,
    parse: socketMode,
    shownDefault: '0660',
  },
  /** `--listen unix:PATH`: the socket file's group (default: hookd's). */
  listenGroup: {
    fileKey: 'listenGroup',
    flag: '--listen-group <group>',
    env: 'HOOKD_LISTEN_GROUP',
    description: "with --listen unix:PATH: the socket file's group, a name or number (e.g. www-data)",
    fromText: asText,
    parse: groupName,
  },
  /** Log lines: `auto` pretty and coloured on a terminal, JSON otherwise; or always one of them. */
  logFormat: {
    fileKey: 'logFormat',
    flag: '--log-format <format>',
    env: 'HOOKD_LOG_FORMAT',
    description: 'auto (default: pretty on a terminal, JSON otherwise), json or pretty',
    fromText: asText,
    parse: oneOf(['auto', 'json', 'pretty'] as const),
    default: 'auto',
  },
} as const satisfies Record<string, OptionSpec>;

/** `--listen-mode` and `--listen-group` only with a socket (alone they would be silently ignored). */
export const OPS_CHECKS: readonly CrossCheck[] = [
  (config, at) => {
    // An unreadable --listen was reported already.
    if (at.refused('listen') || (config.listen as object | undefined) === undefined) return;
    if ('path' in (config.listen as object)) return;
    if (at.given('listenMode') !== undefined)
      at.problem('listenMode', 'needs --listen unix:PATH (it is the socket file mode)');
    if (at.given('listenGroup') !== undefined)
      at.problem('listenGroup', "needs --listen unix:PATH (it is the socket file's group)");
  },
];

/** Idempotent reports and OpenTelemetry tracing. */
export const OPERATOR_OPTIONS = {
  /** How long an `Idempotency-Key` of `POST /_hookd/report` and its answer are kept, ms (default 24 h). */
  idempotencyTtlMs: {
    fileKey: 'idempotency.ttl',
    flag: '--idempotency-ttl <duration>',
    env: 'HOOKD_IDEMPOTENCY_TTL',
    description:
      'how long an Idempotency-Key of POST /_hookd/report and its answer are kept: seconds or 30m, 24h, 7d (default 24h)',
    fromText: asText,
    parse: idempotencyTtl,
    default: DEFAULT_IDEMPOTENCY_TTL,
  },
  /**
   * OpenTelemetry tracing: true or false forces it on or off; absent, the standard `OTEL_*`
   * variables decide (on when an OTLP endpoint is set, off with `OTEL_SDK_DISABLED=true`).
   */
  tracing: {
    fileKey: 'tracing.enabled',
    flag: '--tracing <on|off>',
    env: 'HOOKD_TRACING',
    description:
      'OpenTelemetry traces over OTLP/HTTP (default: on when OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set, unless OTEL_SDK_DISABLED=true)',
    fromText: asBool,
    parse: trueOrFalse('must be true or false (on, off)'),
  },
  /** OTLP/HTTP traces endpoint (`…/v1/traces`); absent: `OTEL_EXPORTER_OTLP_*` or the SDK default. */
  tracingEndpoint: {
    fileKey: 'tracing.endpoint',
    flag: '--tracing-endpoint <url>',
    env: 'HOOKD_TRACING_ENDPOINT',
    description:
      'OTLP/HTTP traces URL, e.g. http://127.0.0.1:4318/v1/traces (default: the OTEL_EXPORTER_OTLP_* variables)',
    fromText: asText,
    parse: tracingEndpoint,
  },
} as const satisfies Record<string, OptionSpec>;

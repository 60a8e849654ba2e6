/** How callbacks leave hookd: allowed schemes, the egress proxy, endpoint verification (src/egress/, src/verification/). */
import { proxyUrlProblem } from '../../egress/index.js';
import { defaultCallbackSchemes, schemeProblem, TransportRegistry } from '../../transports/index.js';
import { asList, asText, type CrossCheck, type OptionSpec, refuse } from './spec.js';

// The transports this build has: which schemes `--callback-schemes` may name.
const transports = new TransportRegistry();

function callbackSchemes(given: unknown): string[] {
  const v = typeof given === 'string' ? asList(given) : given;
  if (!Array.isArray(v) || v.length === 0 || !v.every((s) => typeof s === 'string'))
    return refuse('must be a list of Callback URL schemes such as http,https,amqp');
  const schemes = [...new Set(v.map((s: string) => s.toLowerCase().replace(/:$/, '')))];
  for (const s of schemes) {
    const problem = schemeProblem(s, transports);
    if (problem !== undefined) refuse(problem);
  }
  return schemes;
}

function callbackProxy(v: unknown): string {
  if (typeof v !== 'string') return refuse('must be a URL such as http://proxy.internal:3128');
  const problem = proxyUrlProblem(v);
  return problem ? refuse(problem) : v;
}

export const CALLBACK_OPTIONS = {
  /** The forward proxy every callback and notification leaves through (`http(s)://[user:pass@]host:port`). */
  callbackProxy: {
    fileKey: 'callbackProxy',
    flag: '--callback-proxy <url>',
    env: 'HOOKD_CALLBACK_PROXY',
    description:
      'forward proxy every callback and notification goes through (HTTP CONNECT), e.g. http://user:pass@proxy:3128',
    fromText: asText,
    parse: callbackProxy,
  },
  /** A file holding the proxy's `user:password` (one line), instead of the URL's. */
  callbackProxyCredentialsFile: {
    fileKey: 'callbackProxyCredentialsFile',
    flag: '--callback-proxy-credentials-file <file>',
    env: 'HOOKD_CALLBACK_PROXY_CREDENTIALS_FILE',
    description: "file holding the callback proxy's user:password (one line), instead of the URL's",
    fromText: asText,
    parse: (v: unknown): string =>
      typeof v === 'string' && v !== '' ? v : refuse('must be the path of a file holding user:password'),
  },
  /** The operator's client certificate (PEM) for https callbacks of hooks without their own `Tls`. */
  callbackClientCert: {
    fileKey: 'callbackClientCert',
    flag: '--callback-client-cert <file>',
    env: 'HOOKD_CALLBACK_CLIENT_CERT',
    description:
      'client certificate (PEM file) presented on every https callback whose hook has no Tls of its own (mutual TLS); with --callback-client-key',
    fromText: asText,
    parse: (v: unknown): string =>
      typeof v === 'string' && v !== '' ? v : refuse('must be the path of a PEM certificate file'),
  },
  /** The private key (PEM, unencrypted) of `callbackClientCert`. */
  callbackClientKey: {
    fileKey: 'callbackClientKey',
    flag: '--callback-client-key <file>',
    env: 'HOOKD_CALLBACK_CLIENT_KEY',
    description: 'private key (unencrypted PEM file) of --callback-client-cert',
    fromText: asText,
    parse: (v: unknown): string =>
      typeof v === 'string' && v !== '' ? v : refuse('must be the path of a PEM private key file'),
  },
  /** The Callback URL schemes users may use; the default is every one this build has a transport for. */
  callbackSchemes: {
    fileKey: 'callbackSchemes',
    flag: '--callback-schemes <list>',
    env: 'HOOKD_CALLBACK_SCHEMES',
    description:
      'Callback URL schemes users may use, comma-separated (default http,https,amqp,amqps,mqtt,mqtts,nats,redis: those of them this build has)',
    fromText: asList,
    parse: callbackSchemes,
    default: () => defaultCallbackSchemes(transports),
    shownDefault: 'http,https,amqp,amqps,mqtt,mqtts,nats,redis',
  },
  /** Endpoint verification of hooks without their own `Verification` (default `off`, applied by the sender). */
  callbackVerification: {
    fileKey: 'callbackVerification',
    flag: '--callback-verification <mode>',
    env: 'HOOKD_CALLBACK_VERIFICATION',
    description:
      "off (default) or cloudevents: the CloudEvents validation handshake before a callback origin's first delivery, for hooks without their own Verification",
    fromText: asText,
    parse: (v: unknown): 'off' | 'cloudevents' =>
      v === 'off' || v === 'cloudevents' ? v : refuse('must be off or cloudevents'),
    shownDefault: 'off',
  },
} as const satisfies Record<string, OptionSpec>;

export const CALLBACK_CHECKS: readonly CrossCheck[] = [
  (_config, at) => {
    if (at.given('callbackProxyCredentialsFile') !== undefined && at.given('callbackProxy') === undefined)
      at.problem('callbackProxyCredentialsFile', 'needs callbackProxy (--callback-proxy) as well');
  },
  (_config, at) => {
    const cert = at.given('callbackClientCert') !== undefined;
    if (cert !== (at.given('callbackClientKey') !== undefined)) {
      at.problem(
        cert ? 'callbackClientCert' : 'callbackClientKey',
        cert
          ? 'needs callbackClientKey (--callback-client-key) as well'
          : 'needs callbackClientCert (--callback-client-cert) as well',
      );
    }
  },
];

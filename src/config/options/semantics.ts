/** Issue 24: delivery semantics (src/egress/, src/verification/). */
import { proxyUrlProblem } from '../../egress/index.js';
import { asText, type CrossCheck, type OptionSpec, refuse } from './spec.js';

function callbackProxy(v: unknown): string {
  if (typeof v !== 'string') return refuse('must be a URL such as http://proxy.internal:3128');
  const problem = proxyUrlProblem(v);
  return problem ? refuse(problem) : v;
}

export const SEMANTICS_OPTIONS = {
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

export const SEMANTICS_CHECKS: readonly CrossCheck[] = [
  (_config, at) => {
    if (at.given('callbackProxyCredentialsFile') !== undefined && at.given('callbackProxy') === undefined)
      at.problem('callbackProxyCredentialsFile', 'needs callbackProxy (--callback-proxy) as well');
  },
];

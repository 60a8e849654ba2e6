/**
 * The forward proxy every callback and notification leaves through (`--callback-proxy`), so
 * receivers can allow-list one egress address. Credentials come from the URL's userinfo or from
 * `--callback-proxy-credentials-file` (one line `user:password`, kept out of command lines and
 * process listings); the file wins when both are given.
 */
import { readFileSync } from 'node:fs';

export interface EgressProxy {
  /** `http:` or `https:` (TLS to the proxy itself). */
  protocol: 'http:' | 'https:';
  host: string;
  port: number;
  /** `Basic …` for `Proxy-Authorization`; absent: no credentials. */
  authorization?: string;
  /** The URL without credentials, for logs and errors. */
  display: string;
}

/** Why a proxy URL is not one: undefined when it is fine (load-config checks with this). */
export function proxyUrlProblem(text: string): string | undefined {
  if (!URL.canParse(text)) return 'must be a URL such as http://proxy.internal:3128';
  const u = new URL(text);
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    return `must be an http:// or https:// proxy URL, not ${u.protocol}//`;
  }
  if (u.pathname !== '/' || u.search !== '' || u.hash !== '')
    return 'must name only the proxy: scheme, host and port';
  return undefined;
}

/** The proxy of the configuration; throws a message naming the option when it cannot be used. */
export function egressProxyOf(url: string, credentialsFile?: string): EgressProxy {
  const problem = proxyUrlProblem(url);
  if (problem) throw new Error(`callbackProxy ${problem}`);
  const u = new URL(url);
  let user = decodeURIComponent(u.username);
  let password = decodeURIComponent(u.password);
  if (credentialsFile !== undefined) {
    const line = readFileSync(credentialsFile, 'utf8').split(/\r?\n/)[0]!.trim();
    const colon = line.indexOf(':');
    if (colon <= 0) {
      throw new Error(`callbackProxyCredentialsFile ${credentialsFile} must hold one line user:password`);
    }
    user = line.slice(0, colon);
    password = line.slice(colon + 1);
  }
  const protocol = u.protocol as EgressProxy['protocol'];
  const port = u.port === '' ? (protocol === 'https:' ? 443 : 80) : Number(u.port);
  const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
  return {
    protocol,
    host,
    port,
    ...(user !== '' && { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` }),
    display: `${protocol}//${u.host}`,
  };
}

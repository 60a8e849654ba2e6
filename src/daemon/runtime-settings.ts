import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { HookdConfig } from '../config/index.js';
import { AddressPolicy, SwitchablePolicy } from '../policy/index.js';
import { queryRedactor } from '../privacy/index.js';
import { requestUriBuilder, TrustedProxies } from '../server/index.js';

/**
 * The settings a reload may change while hookd runs, in one place. Components read them per
 * request through this object, so applying a new configuration is a handful of assignments that
 * take effect for the next request; a configuration that does not parse changes nothing.
 */
export class RuntimeSettings {
  readonly policy: SwitchablePolicy;
  eventsEnabled: boolean;
  private trusted: TrustedProxies;
  private uriBuilder: (req: IncomingMessage, socket?: Socket) => string;
  private base: string | undefined;
  private redactor: ((uri: string) => string) | undefined;
  /** Where the proxy listens (`http://host:port`), once it does; undefined on a unix socket. */
  private proxy: URL | undefined;

  constructor(config: HookdConfig) {
    this.redactor = queryRedactor(config.redactQueryParams ?? []);
    this.policy = new SwitchablePolicy(new AddressPolicy(config.allowCallbackNets));
    this.eventsEnabled = config.eventsEnabled;
    this.trusted = new TrustedProxies(config.trustedProxies, 'path' in config.listen);
    this.uriBuilder = requestUriBuilder(config.publicBaseUrl, this.trusted);
    this.base = config.publicBaseUrl;
  }

  /** Builds everything first and assigns only when all of it parsed. */
  apply(config: HookdConfig): void {
    const policy = new AddressPolicy(config.allowCallbackNets);
    const trusted = new TrustedProxies(config.trustedProxies, 'path' in config.listen);
    this.policy.set(policy);
    this.trusted = trusted;
    this.uriBuilder = requestUriBuilder(config.publicBaseUrl, trusted);
    this.base = config.publicBaseUrl;
    this.eventsEnabled = config.eventsEnabled;
    this.redactor = queryRedactor(config.redactQueryParams ?? []);
  }

  /** `$REQUEST_URI` with the `--redact-query-params` values replaced. */
  readonly redactUri = (uri: string): string => (this.redactor === undefined ? uri : this.redactor(uri));

  get empty(): boolean {
    return this.trusted.empty;
  }

  trusts(address: string | undefined): boolean {
    return this.trusted.trusts(address);
  }

  /** `$REQUEST_URI` of a proxied request. */
  readonly uriOf = (req: IncomingMessage, socket?: Socket): string => this.uriBuilder(req, socket);

  /** Told once the proxy listens: the address `proxyBase` names when there is no publicBaseUrl. */
  proxyListening(url: string): void {
    this.proxy = url.startsWith('http') && URL.canParse(url) ? new URL(url) : undefined;
  }

  /**
   * Scheme and host of `$REQUEST_URI` for the console's test events and dry runs: where a request
   * that fires the hook would have gone. `publicBaseUrl`; else the proxy listener's address, named
   * by the host the browser used when the proxy listens on every interface; else (the request
   * came in on the proxy's own port, or the proxy is a unix socket) the request's host. Never the
   * console's own port, which proxies nothing.
   */
  proxyBase(host: string | undefined, localPort: number | undefined): string {
    if (this.base !== undefined) return this.base;
    const proxy = this.proxy;
    if (proxy === undefined || Number(proxy.port) === localPort) return this.reportBase(host);
    const wildcard = proxy.hostname === '0.0.0.0' || proxy.hostname === '[::]';
    if (!wildcard || host === undefined) return proxy.origin;
    const hostname = URL.canParse(`http://${host}`) ? new URL(`http://${host}`).hostname : proxy.hostname;
    return `${proxy.protocol}//${hostname}:${proxy.port}`;
  }

  /** Scheme and host for requests reported through the API. */
  reportBase(host: string | undefined): string {
    return this.base ?? `http://${host ?? 'localhost'}`;
  }
}

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

  /** Scheme and host for requests reported through the API. */
  reportBase(host: string | undefined): string {
    return this.base ?? `http://${host ?? 'localhost'}`;
  }
}

import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import { Authenticator } from '../auth/index.js';
import type { HookdConfig } from '../config/index.js';
import type { Store } from '../store/index.js';
import { Accounts } from '../users/index.js';
import { ApiIdentity } from './api-identity.js';
import { identityProviderFrom } from './from-config.js';
import type { TrustCheck } from './header-provider.js';
import type { IdentityProvider } from './provider.js';
import { type RequestUser, requestUserResolver } from './request-user.js';

/** What the daemon wires in: the API's authentication and, with a provider, the proxy's parts. */
export interface DaemonIdentity {
  api: ApiIdentity;
  provider: IdentityProvider | undefined;
  /** Options of the reverse proxy (ProxyOptions); empty without a provider. */
  proxy: {
    /** The lazy user of a proxied request; absent without a provider (nothing to pay per request). */
    requestUser?: (req: IncomingMessage) => RequestUser;
    /** The header the proxy drops from untrusted peers (`--identity-header`). */
    guardedHeader?: string;
  };
}

/** Builds the identity side of a daemon from its configuration. */
export function assembleIdentity(
  config: HookdConfig,
  store: Store,
  trusted: TrustCheck & { readonly empty: boolean },
  log: Logger,
  /** The daemon's one Accounts (its changes reach the scope cache); a new one when absent. */
  accounts: Accounts = new Accounts(store),
  /** Told of each proxied request's provider name refused as a hookd user name (metrics). */
  onRefusedName?: () => void,
): DaemonIdentity {
  const provider = identityProviderFrom(config, trusted);
  const api = new ApiIdentity({
    tokens: new Authenticator(store),
    ...(provider && { provider }),
    accounts,
    refuseUnknownUsers: config.identityRefuseUnknownUsers === true,
  });
  if (!provider) return { api, provider, proxy: {} };
  if (provider.kind === 'header' && trusted.empty) {
    log.warn(
      { header: config.identityHeader },
      'identity: --identity-header is set but no --trusted-proxy is: the header is ignored from every peer',
    );
  }
  log.info(
    { provider: provider.kind, refuseUnknownUsers: config.identityRefuseUnknownUsers === true },
    'identity provider configured',
  );
  return {
    api,
    provider,
    proxy: {
      requestUser: requestUserResolver(provider, log, onRefusedName),
      ...(provider.guardedHeader !== undefined && { guardedHeader: provider.guardedHeader }),
    },
  };
}

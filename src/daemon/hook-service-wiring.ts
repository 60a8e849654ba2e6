import { checkCallbackTarget } from '../policy/index.js';
import { HookService } from '../service/index.js';
import { newSigningSecret } from '../signing/index.js';
import { ADMIN_USER, type UserScopes } from '../users/index.js';
import type { OpenedStores } from './open-store.js';
import type { RuntimeSettings } from './runtime-settings.js';

/**
 * The hook service as the daemon runs it: callback targets policed (hookd's own address first, a
 * known loop; then the address policy), path patterns checked against the owner's scopes, and the
 * signing secret made with the hook and stored in its transaction.
 */
export function hookServiceFor(parts: {
  opened: OpenedStores;
  settings: RuntimeSettings;
  users: UserScopes;
  /** Why a URL at hookd's own address is refused (a known loop, src/loops/), or undefined. */
  selfTarget: (url: URL) => string | undefined;
  /** The Callback's scheme allowed here, and its URL's shape as its transport judges it. */
  checkScheme: (url: URL) => string | undefined;
  /** Header names the Callback's transport keeps for the message itself. */
  checkHeaders: (url: URL, names: readonly string[]) => string | undefined;
  /** Every scheme a transport serves (`amqp:`): their hosts are judged by the address policy. */
  schemes: readonly string[];
}): HookService {
  const { opened, settings, users, selfTarget, checkScheme, checkHeaders } = parts;
  const schemes = parts.schemes.map((s) => `${s}:`);
  const hooks = new HookService(
    opened.store,
    opened.ephemeralHooks,
    {
      checkScheme,
      checkHeaders,
      checkCallback: async (url, owner) => {
        const self = selfTarget(url);
        if (self !== undefined) return self;
        const r = await checkCallbackTarget(url, settings.policy, { schemes });
        // Only the admin (the operator) is told what a refused name resolved to.
        return r.ok ? undefined : owner === ADMIN_USER ? r.detail : r.message;
      },
    },
    users.checkPattern,
  );
  hooks.withFirstSecret((hook) => ({
    hookId: hook.Id,
    secret: newSigningSecret(),
    previous: null,
    previousValidUntil: null,
  }));
  return hooks;
}

import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Authenticator, Principal } from '../auth/index.js';
import type { DeliveryPipeline } from '../delivery/index.js';
import type { MatchEngine } from '../engine/index.js';
import { HookdError } from '../errors/index.js';
import { type ApiFeature, OWN_PREFIX } from '../http-api/index.js';
import type { ApiIdentity } from '../identity/index.js';
import { identityRequestOf } from '../identity/index.js';
import type { HookService } from '../service/index.js';
import {
  CombinedAggregates,
  type DeliveryAggregates,
  type DeliveryStore,
  type UserStore,
} from '../store/index.js';
import type { Accounts } from '../users/index.js';
import { ADMIN_USER } from '../users/index.js';
import { assetsOnFirstUse } from './assets.js';
import { html } from './html.js';
import { barePage } from './layout.js';
import type { PageDeps } from './page-deps.js';
import { checkCsrf, isHttps, pageErrorOf, pagePluginBasics } from './page-plugin.js';
import { deliveryPages } from './pages/deliveries.js';
import { hookPages } from './pages/hooks.js';
import { livePage } from './pages/live.js';
import { overviewPage } from './pages/overview.js';
import { usersPage } from './pages/users.js';
import { type ConsoleRequestContext, SESSION, sendHtml } from './respond.js';
import { type Session, SessionStore, sameToken } from './sessions.js';

export const CONSOLE_PATH = `${OWN_PREFIX}/console`;
const COOKIE = 'hookd_console';
const PRE_COOKIE = 'hookd_signin';

/** The Content-Security-Policy of every console answer: no inline script or style, no framing. */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export interface ConsoleDeps {
  /** The API base (`/` or e.g. `/api`). */
  base: string;
  hooks: HookService;
  pipeline: DeliveryPipeline;
  engine: MatchEngine;
  auth: Authenticator;
  users: UserStore;
  /** The delivery stores whose aggregates the overview adds up (durable and ephemeral). */
  deliveryStores: readonly DeliveryStore[];
  /** Whether a peer's X-Forwarded-Proto is believed (--trusted-proxy). */
  trustsProxy: (address: string | undefined) => boolean;
  /**
   * `scheme://host` for the `$REQUEST_URI` of a dry run and a test event: the proxy's
   * (publicBaseUrl, else its listener), never the console's own address.
   */
  reportBase: (req: FastifyRequest) => string;
  /** The hook state the API shows (src/verification/); absent: the stored state. */
  hookStateView?: PageDeps['hookStateView'];
  /**
   * The API's identity (tokens or the configured provider): a browser request the provider
   * identifies is signed in without a token.
   */
  identity?: Pick<ApiIdentity, 'provider' | 'authenticate'>;
  /** User and token administration, for the admin's Users page. */
  accounts?: Accounts;
  /** The live tail: told how to recognise a console session on its WebSocket upgrade. */
  tail?: { acceptSessions(fn: (req: IncomingMessage) => Promise<Principal | undefined>): void };
  sessions?: SessionStore;
  /**
   * The Ids of a user's notification endpoints: their deliveries go through the same pipeline
   * (and rollups) as hooks', and the overview subtracts them from its hook figures.
   */
  notificationEndpoints?: (owner: string) => readonly string[];
  /**
   * Whether console routes answer a request where it arrived (src/console/listener.ts): on the
   * console's own listener, and under the proxied origin only with `--console-on-proxy`.
   * Absent: everywhere.
   */
  servedHere?: (req: IncomingMessage) => boolean;
}

/**
 * The web console (docs/API.md "Web console"): server-rendered pages under
 * `{base}/_hookd/console/`, signed in with an API token exchanged for a server-side session.
 * Every page acts as the signed-in user through the same services as the API, so it shows what
 * that user sees through the API and nothing more.
 */
export function consoleFeature(deps: ConsoleDeps): ApiFeature {
  // Pages, not API resources: nothing of it belongs in the OpenAPI document.
  return { name: 'console', register: (api) => consoleRoutes(api, deps) };
}

function consoleRoutes(api: FastifyInstance, deps: ConsoleDeps): void {
  const sessions = deps.sessions ?? new SessionStore();
  const root = `${deps.base === '/' ? '' : deps.base}${CONSOLE_PATH}`;
  const aggregates: DeliveryAggregates = new CombinedAggregates(deps.deliveryStores.map((s) => s.aggregates));
  const asset = assetsOnFirstUse();
  const https = (req: IncomingMessage) => isHttps(deps.trustsProxy, req);

  /** The user the identity provider says a browser request comes from, if one is configured and does. */
  const providerUser = async (req: IncomingMessage): Promise<string | undefined> => {
    if (!deps.identity?.provider) return undefined;
    try {
      const p = await deps.identity.authenticate(identityRequestOf(req));
      // A hookd token in the request is not a browser sign-in.
      return p.tokenId === undefined ? p.user : undefined;
    } catch {
      return undefined;
    }
  };

  /**
   * The session of a request's cookie, still valid: its token not revoked, or, for a session the
   * identity provider started, the provider still naming the same user.
   */
  const lookup = async (req: IncomingMessage): Promise<Session | undefined> => {
    const id = cookieValue(req.headers.cookie, COOKIE);
    const s = sessions.get(id);
    if (!s) return undefined;
    const valid =
      s.tokenId !== undefined
        ? (await deps.users.getToken(s.tokenId)) !== undefined
        : (await providerUser(req)) === s.user;
    if (!valid) {
      sessions.end(id);
      return undefined;
    }
    return s;
  };

  /** A session from the identity provider for a browser without one; its cookie goes on the reply. */
  const signInByProvider = async (req: FastifyRequest, reply: FastifyReply): Promise<Session | undefined> => {
    const user = await providerUser(req.raw);
    if (user === undefined) return undefined;
    const { id, session } = sessions.create(user);
    reply.header('set-cookie', cookie(COOKIE, id, root, https(req.raw)));
    req.log.info({ user }, 'console: signed in through the identity provider');
    return session;
  };

  deps.tail?.acceptSessions(async (req) => {
    // A cross-site page cannot open the tail with the user's cookie (SameSite=Strict already
    // keeps it from being sent; the Origin check keeps it so for browsers that ignore it).
    // A session is only good on the console's own origin (a page under the proxied one is not it).
    if (deps.servedHere && !deps.servedHere(req)) return undefined;
    const origin = req.headers.origin;
    if (origin !== undefined && req.headers.host !== undefined && new URL(origin).host !== req.headers.host)
      return undefined;
    const s = await lookup(req);
    return s && { user: s.user, ...(s.tokenId !== undefined && { tokenId: s.tokenId }) };
  });

  api.register(
    async (app) => {
      pagePluginBasics(
        app,
        deps.servedHere,
        'the web console is served on its own listener (--console-listen, default 127.0.0.1:8472), not under the proxied origin (--console-on-proxy would put it here)',
      );
      app.addHook('onSend', async (_req, reply, payload) => {
        reply.header('content-security-policy', CONSOLE_CSP);
        reply.header('x-content-type-options', 'nosniff');
        reply.header('referrer-policy', 'same-origin');
        reply.header('x-frame-options', 'DENY');
        if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
        return payload;
      });
      app.setErrorHandler((err, req, reply) => {
        const e = pageErrorOf(err);
        if (!e) req.log.error({ err }, 'console: unexpected error');
        const status = e?.status ?? 500;
        const message = e?.message ?? 'hookd failed to handle this request; the log has details';
        if (req.headers['hx-request'] === 'true')
          return sendHtml(reply, html`<p class="error" role="alert">${message}</p>`, status);
        return sendHtml(
          reply,
          barePage(
            root,
            e?.title ?? 'Error',
            html`<p>${message}</p><p><a href="${root}/">Back to the console</a></p>`,
          ),
          status,
        );
      });
      app.setNotFoundHandler((_req, reply) =>
        sendHtml(
          reply,
          barePage(
            root,
            'Not found',
            html`<p>There is no such page.</p><p><a href="${root}/">Back to the console</a></p>`,
          ),
          404,
        ),
      );

      // `quietLog`: one line per stylesheet and script at info would bury the requests that matter.
      app.get('/assets/:name', { config: { public: true, quietLog: true } }, async (req, reply) => {
        const a = asset((req.params as { name: string }).name);
        if (!a) throw new HookdError('NOT_FOUND', 'no such file');
        reply.header('cache-control', 'public, max-age=3600');
        return reply.type(a.type).send(a.body);
      });

      // Sign-in: a token exchanged for a session. The form carries a one-time value that must
      // match a cookie set with it (a cross-site page cannot sign a browser in as someone else).
      app.get('/signin', { config: { public: true } }, async (req, reply) => {
        if ((await lookup(req.raw)) || (await signInByProvider(req, reply)))
          return reply.redirect(`${root}/`, 303);
        return signinForm(req, reply, '');
      });
      app.post('/signin', { config: { public: true } }, async (req, reply) => {
        const f = (req.body ?? {}) as Record<string, string>;
        const pre = cookieValue(req.headers.cookie, PRE_COOKIE);
        if (!pre || !sameToken(f._csrf, pre))
          return signinForm(req, reply, 'The form expired; try again.', 403);
        const principal = await deps.auth.authenticate(`Bearer ${(f.token ?? '').trim()}`);
        if (!principal)
          return signinForm(req, reply, 'That token is not valid (unknown, revoked or mistyped).', 401);
        const { id } = sessions.create(principal.user, principal.tokenId);
        reply.header('set-cookie', [
          cookie(COOKIE, id, root, https(req.raw)),
          cookie(PRE_COOKIE, '', root, https(req.raw), 0),
        ]);
        req.log.info({ user: principal.user }, 'console: signed in');
        return reply.redirect(`${root}/`, 303);
      });

      // Everything below needs a session, and a CSRF token on every state-changing request.
      app.register(async (signed) => {
        signed.addHook('preHandler', async (req, reply) => {
          const s =
            (await lookup(req.raw)) ??
            (req.method === 'GET' ? await signInByProvider(req, reply) : undefined);
          if (!s) {
            if (req.method === 'GET' || req.method === 'HEAD') {
              if (req.headers['hx-request'] === 'true') {
                reply.header('hx-redirect', `${root}/signin`);
                throw new HookdError('UNAUTHENTICATED', 'the session ended; sign in again');
              }
              return reply.redirect(`${root}/signin`, 303);
            }
            throw new HookdError('UNAUTHENTICATED', 'the session ended; sign in again');
          }
          checkCsrf(req, s.csrf);
          (req as unknown as Record<symbol, ConsoleRequestContext>)[SESSION] = {
            session: s,
            ctx: { root, user: s.user, csrf: s.csrf, admin: s.user === ADMIN_USER },
          };
        });
        signed.post('/signout', { config: { public: true } }, async (req, reply) => {
          sessions.end(cookieValue(req.headers.cookie, COOKIE));
          reply.header('set-cookie', cookie(COOKIE, '', root, https(req.raw), 0));
          return reply.redirect(`${root}/signin`, 303);
        });
        const pageDeps: PageDeps = { ...deps, root, aggregates };
        overviewPage(signed, pageDeps);
        hookPages(signed, pageDeps);
        deliveryPages(signed, pageDeps);
        livePage(signed, pageDeps);
        if (deps.accounts)
          usersPage(signed, {
            root,
            accounts: deps.accounts,
            users: deps.users,
            hooks: deps.hooks,
            sessions,
          });
      });
    },
    { prefix: CONSOLE_PATH },
  );

  function signinForm(req: FastifyRequest, reply: FastifyReply, message: string, status = 200) {
    const pre = randomBytes(24).toString('base64url');
    reply.header('set-cookie', cookie(PRE_COOKIE, pre, root, https(req.raw), 600));
    return sendHtml(
      reply,
      barePage(
        root,
        'Sign in to hookd',
        html`<form method="post" action="${root}/signin" class="signin">
<input type="hidden" name="_csrf" value="${pre}">
${message ? html`<p class="error" role="alert">${message}</p>` : ''}
<div class="field"><label for="token">API token</label>
<input id="token" name="token" type="password" autocomplete="off" required placeholder="hkd_…"></div>
<p><button type="submit" class="primary">Sign in</button></p>
<div class="hint signin-help"><p>Where to find a token:</p>
<ul>
<li>The admin's token is in the file <code>admin.token</code> in hookd's data directory, written on the first start: <code>~/.local/state/hookd/admin.token</code> for hookd run by hand (or <code>$XDG_STATE_HOME/hookd/</code>, or the <code>--data-dir</code> you gave), <code>/var/lib/hookd/admin.token</code> under systemd (readable by root: <code>sudo cat /var/lib/hookd/admin.token</code>).</li>
<li>Other users get theirs from the admin: <code>hookd token create USER</code> or <code>hookctl tokens create USER</code>.</li>
</ul>
<p>The token is exchanged for a session here and not kept in the browser.</p></div>
</form>`,
      ),
      status,
    );
  }
}

function cookie(name: string, value: string, path: string, secure: boolean, maxAge?: number): string {
  return `${name}=${value}; Path=${path}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}${
    maxAge !== undefined ? `; Max-Age=${maxAge}` : ''
  }`;
}

export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return undefined;
}

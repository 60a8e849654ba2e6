import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../auth/index.js';
import {
  assetsOnFirstUse,
  checkCsrf,
  cookieValue,
  enterPages,
  type Html,
  html,
  isHttps,
  type PageDeps,
  pageErrorOf,
  pagePluginBasics,
  sendHtml,
  userWorldPages,
} from '../console/index.js';
import { HookdError } from '../errors/index.js';
import { type ApiFeature, OWN_PREFIX } from '../http-api/index.js';
import {
  CombinedAggregates,
  type DeliveryStore,
  describeStoreFault,
  isStoreFault,
  type UserStore,
} from '../store/index.js';
import { packageInfo } from '../util/index.js';
import { judge } from './access.js';
import { type Brand, brandCss } from './brand.js';
import { eventOf } from './events.js';
import { PORTAL_COOKIE, portalCookie, securityHeaders } from './http.js';
import type { PortalLinks } from './links.js';
import { type PortalSession, PortalSessions } from './sessions.js';
import { portalBarePage, portalShell } from './shell.js';

export const PORTAL_PATH = `${OWN_PREFIX}/portal`;

export interface PortalPagesDeps extends Omit<PageDeps, 'root' | 'aggregates'> {
  /** The delivery stores whose figures the hook list's sparklines add up. */
  deliveryStores: readonly DeliveryStore[];
  users: Pick<UserStore, 'getUser'>;
  links: PortalLinks;
  sessions?: PortalSessions;
  /** `--portal-frame-ancestors`: origins whose pages may frame the portal. */
  frameAncestors: readonly string[];
  /** `--portal-brand-file`: the look of every link that sets none of its own. */
  brand: Brand;
  trustsProxy: (address: string | undefined) => boolean;
  /** Where console routes answer (src/console/listener.ts); the portal answers in the same places. */
  servedHere?: (req: IncomingMessage) => boolean;
  tail?: {
    acceptSessions(fn: (req: IncomingMessage) => Promise<Principal | undefined>, path?: string): void;
  };
}

const SIGNED = Symbol('portal-session');

/**
 * The embeddable portal's pages (docs/API.md "Embeddable portal"): the console's pages of one
 * user's own world under `{base}/_hookd/portal/`, signed in only by a one-time link, in the
 * service's look, framable by the listed origins only.
 */
export function portalPagesFeature(deps: PortalPagesDeps): ApiFeature {
  return { name: 'portal', register: (api) => portalRoutes(api, deps) };
}

function portalRoutes(api: FastifyInstance, deps: PortalPagesDeps): void {
  const sessions = deps.sessions ?? new PortalSessions();
  const root = `${deps.base === '/' ? '' : deps.base}${PORTAL_PATH}`;
  const own = join(packageInfo().root, 'src', 'portal', 'assets');
  const asset = assetsOnFirstUse([
    ['portal.css', join(own, 'portal.css'), 'text/css; charset=utf-8'],
    ['portal.js', join(own, 'portal.js'), 'text/javascript; charset=utf-8'],
  ]);
  const https = (req: IncomingMessage) => isHttps(deps.trustsProxy, req);

  /** The session of a request's cookie, while its user still exists. */
  const lookup = async (req: IncomingMessage): Promise<{ id: string; s: PortalSession } | undefined> => {
    const id = cookieValue(req.headers.cookie, PORTAL_COOKIE);
    const s = sessions.get(id);
    if (!s || !id) return undefined;
    if (!(await deps.users.getUser(s.user))) {
      sessions.end(id);
      return undefined;
    }
    return { id, s };
  };

  deps.tail?.acceptSessions(async (req) => {
    if (deps.servedHere && !deps.servedHere(req)) return undefined;
    const origin = req.headers.origin;
    if (origin !== undefined && req.headers.host !== undefined && new URL(origin).host !== req.headers.host)
      return undefined;
    const found = await lookup(req);
    return found && judge('GET', '/live', found.s).ok ? { user: found.s.user } : undefined;
  }, `${PORTAL_PATH}/tail`);

  const bare = (reply: FastifyReply, title: string, body: Html, status: number, brand = deps.brand) =>
    sendHtml(reply, portalBarePage(root, title, body, brand.Theme ?? 'light', brand.Title), status);

  api.register(
    async (app) => {
      pagePluginBasics(
        app,
        deps.servedHere,
        'the portal is served on the console listener (--console-listen)',
      );
      app.addHook('onSend', async (req, reply, payload) => {
        const s = (req as unknown as Record<symbol, PortalSession | undefined>)[SIGNED];
        securityHeaders(reply, deps.frameAncestors, s?.brand ?? deps.brand);
        return payload;
      });
      app.setErrorHandler((err, req, reply) => {
        const e =
          !(err instanceof HookdError) && isStoreFault(err)
            ? new HookdError(
                'STORE_UNAVAILABLE',
                `hookd's store is unavailable (${describeStoreFault(err)}); try again shortly`,
              )
            : pageErrorOf(err);
        if (!e) req.log.error({ err }, 'portal: unexpected error');
        const status = e?.status ?? 500;
        const message = e?.message ?? 'hookd failed to handle this request; the log has details';
        if (req.headers['hx-request'] === 'true')
          return sendHtml(reply, html`<p class="error" role="alert">${message}</p>`, status);
        const s = (req as unknown as Record<symbol, PortalSession | undefined>)[SIGNED];
        const back = s ? html`<p><a href="${root}/hooks">Back to your hooks</a></p>` : '';
        return bare(reply, e?.title ?? 'Error', html`<p>${message}</p>${back}`, status, s?.brand);
      });
      // Every other path under the portal is a route of its own, so that the API's authentication
      // (which asks unknown paths for a token) never answers for the portal.
      const notFound = async (_req: FastifyRequest, reply: FastifyReply) =>
        bare(reply, 'Not found', html`<p>There is no such page in this portal.</p>`, 404);
      app.setNotFoundHandler(notFound);
      app.all('/*', notFound);

      app.get('/assets/:name', async (req, reply) => {
        const a = asset((req.params as { name: string }).name);
        if (!a) throw new HookdError('NOT_FOUND', 'no such file');
        reply.header('cache-control', 'public, max-age=3600');
        return reply.type(a.type).send(a.body);
      });

      // The session's look (or the operator's, before a session): a stylesheet, as the CSP allows no inline style.
      app.get('/brand.css', async (req, reply) => {
        const found = await lookup(req.raw);
        return reply.type('text/css; charset=utf-8').send(brandCss(found?.s.brand ?? deps.brand));
      });

      // The link: used up here, exchanged for a session, and the browser sent on into the portal.
      app.get('/open/:token', async (req, reply) => {
        const opened = await deps.links.open((req.params as { token: string }).token);
        if (!opened.ok) {
          req.log.info({ why: opened.why }, 'portal: link refused');
          const text =
            opened.why === 'used'
              ? html`<p>This link was already used. A portal link signs in once; ask the page that showed you this to open the portal again.</p>`
              : html`<p>This link has expired or is not valid. Portal links are short-lived; ask the page that showed you this to open the portal again.</p>`;
          return bare(reply, opened.why === 'used' ? 'Link already used' : 'Link expired', text, 410);
        }
        const g = opened.grant;
        sessions.end(cookieValue(req.headers.cookie, PORTAL_COOKIE));
        const id = sessions.create({ user: g.user, scopes: g.scopes, readOnly: g.readOnly, brand: g.brand });
        reply.header('set-cookie', portalCookie(id, root, https(req.raw)));
        req.log.info({ user: g.user, readOnly: g.readOnly, scopes: g.scopes }, 'portal: signed in by a link');
        return reply.redirect(`${root}/hooks?from=link`, 303);
      });

      app.register(async (signed) => {
        signed.addHook('preHandler', async (req, reply) => {
          const found = await lookup(req.raw);
          if (!found) return noSession(req, reply);
          const { s } = found;
          (req as unknown as Record<symbol, PortalSession>)[SIGNED] = s;
          const route = routeOf(req);
          if (route === '/') return;
          const verdict = judge(req.method, route, s);
          if (!verdict.ok)
            throw new HookdError(verdict.status === 404 ? 'NOT_FOUND' : 'FORBIDDEN', verdict.reason);
          checkCsrf(req, s.csrf);
          const shell = portalShell({ root, parentOrigins: deps.frameAncestors }, s);
          enterPages(req, { root, user: s.user, csrf: s.csrf, admin: false, shell });
        });
        signed.addHook('onSend', async (req, reply, payload) => {
          const s = (req as unknown as Record<symbol, PortalSession | undefined>)[SIGNED];
          if (!s) return payload;
          const route = `${req.method} ${routeOf(req)}`;
          const location = reply.getHeader('location');
          const e = eventOf(route, reply.statusCode, req.params as { id?: string }, location?.toString());
          if (e?.later) s.pending.push(e.event);
          else if (e) reply.header('hx-trigger', JSON.stringify({ [e.event.type]: e.event }));
          return payload;
        });
        signed.get('/', async (_req, reply) => reply.redirect(`${root}/hooks`, 303));
        userWorldPages(signed, {
          ...deps,
          root,
          aggregates: new CombinedAggregates(deps.deliveryStores.map((d) => d.aggregates)),
        });
      });
    },
    { prefix: PORTAL_PATH },
  );

  /** No session: a page that says why (a frame of another site over plain HTTP keeps no cookie). */
  function noSession(req: FastifyRequest, reply: FastifyReply) {
    if (req.method !== 'GET' && req.method !== 'HEAD')
      throw new HookdError('UNAUTHENTICATED', 'the portal session ended; open the portal again');
    const fromLink = (req.query as Record<string, unknown>).from === 'link';
    const why = fromLink
      ? https(req.raw)
        ? html`<p>Your browser did not keep the portal's session cookie (it may block cookies in embedded pages). Open the portal again, or allow cookies for this site.</p>`
        : html`<p>Your browser did not keep the portal's session cookie. Over plain HTTP, a browser keeps no cookie for a page shown inside another site's page: the portal must be served over HTTPS to work embedded.</p>`
      : html`<p>This portal session has ended (it expires after 30 minutes without use). Open the portal again from the page that showed it.</p>`;
    return bare(reply, 'Session ended', why, 401);
  }
}

/** The route as the console registers it, below the portal's root: `/hooks/:id`. */
function routeOf(req: FastifyRequest): string {
  const url = req.routeOptions.url ?? '';
  const i = url.indexOf(PORTAL_PATH);
  return i === -1 ? url : url.slice(i + PORTAL_PATH.length) || '/';
}

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HookdError } from '../../errors/index.js';
import type { HookService } from '../../service/index.js';
import type { UserStore } from '../../store/index.js';
import type { Accounts } from '../../users/index.js';
import { ADMIN_USER } from '../../users/index.js';
import { type Html, html, seg } from '../html.js';
import { copyable, page, time } from '../layout.js';
import { formOf, sendHtml, sessionOf } from '../respond.js';
import type { SessionStore } from '../sessions.js';

export interface UsersPageDeps {
  root: string;
  accounts: Accounts;
  users: UserStore;
  hooks: HookService;
  sessions: SessionStore;
}

const scopesOf = (text: string | undefined): string[] =>
  (text ?? '')
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter((s) => s !== '');

/**
 * The admin's pages: users, their scopes and tokens, through the same Accounts service as the
 * `/_hookd/users` API. Anyone else gets 404: the pages do not exist for them.
 */
export function usersPage(app: FastifyInstance, deps: UsersPageDeps): void {
  const { root, accounts, users } = deps;

  const adminOnly = (req: FastifyRequest) => {
    const s = sessionOf(req);
    if (s.ctx.user !== ADMIN_USER) throw new HookdError('NOT_FOUND', 'there is no such page');
    return s.ctx;
  };

  /** A refusal of the Accounts service (bad name or scope, duplicate) shown on the page it came from. */
  const orMessage = async (fn: () => Promise<Html | undefined>): Promise<Html | undefined> => {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof HookdError && err.status < 500 && err.status !== 404)
        return html`<p class="error" role="alert">${err.message}</p>`;
      throw err;
    }
  };

  const listPage = async (req: FastifyRequest, reply: FastifyReply, message?: Html) => {
    const ctx = adminOnly(req);
    const all = await users.listUsers();
    const tokens = await users.listTokens();
    const body = html`${message ?? ''}
<div class="table-wrap"><table>
<caption class="visually-hidden">Users</caption>
<thead><tr><th scope="col">User</th><th scope="col">Scopes</th><th scope="col">Tokens</th><th scope="col">Created</th></tr></thead>
<tbody>${all.map(
      (
        u,
      ) => html`<tr><td><a href="${root}/users/${seg(u.name)}">${u.name}</a></td><td>${(u.scopes ?? []).join(' ') || '–'}</td>
<td>${tokens.filter((t) => t.user === u.name).length}</td><td>${time(u.created)}</td></tr>`,
    )}</tbody></table></div>
<h2>Add a user</h2>
<form method="post" action="${root}/users" class="filters">
<input type="hidden" name="_csrf" value="${ctx.csrf}">
<label for="u-name">Name</label> <input id="u-name" name="Name" required>
<label for="u-scopes">Scopes</label> <input id="u-scopes" name="Scopes" size="40" placeholder="default; e.g. own /projects/(*)">
<button type="submit" class="primary">Add user</button>
</form>`;
    return sendHtml(reply, page(ctx, 'Users', 'users', body), message ? 400 : 200);
  };

  const userPage = async (req: FastifyRequest, reply: FastifyReply, name: string, message?: Html) => {
    const ctx = adminOnly(req);
    const user = await accounts.getUser(name);
    const tokens = await users.listTokens(name);
    const body = html`${message ?? ''}
<h2>Scopes</h2>
<p class="hint">Path patterns, and <code>own</code>, that this user's hooks may observe.</p>
<form method="post" action="${root}/users/${seg(name)}/scopes" class="filters">
<input type="hidden" name="_csrf" value="${ctx.csrf}">
<label for="scopes">Scopes</label> <input id="scopes" name="Scopes" value="${(user.scopes ?? []).join(' ')}" size="40">
<button type="submit">Save scopes</button>
</form>
<h2>Tokens</h2>
<div class="table-wrap"><table class="tokens">
<caption class="visually-hidden">Tokens of ${name}</caption>
<thead><tr><th scope="col">Id</th><th scope="col">Label</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${tokens.map(
      (
        t,
      ) => html`<tr><td><code>${t.id}</code></td><td>${t.label}</td><td>${time(t.created)}</td><td class="last-used">${t.lastUsed ? time(t.lastUsed) : html`<span class="hint">never</span>`}</td>
<td><form method="post" action="${root}/users/${seg(name)}/tokens/${seg(t.id)}/revoke" data-confirm="Revoke token ${t.id}? Clients using it stop working.">
<input type="hidden" name="_csrf" value="${ctx.csrf}"><button type="submit" class="danger">Revoke</button></form></td></tr>`,
    )}</tbody></table></div>
<form method="post" action="${root}/users/${seg(name)}/tokens" class="filters">
<input type="hidden" name="_csrf" value="${ctx.csrf}">
<label for="t-label">Label</label> <input id="t-label" name="Label" maxlength="200">
<button type="submit">Create token</button>
</form>
${
  name === ADMIN_USER
    ? ''
    : html`<h2>Remove</h2>
<form method="post" action="${root}/users/${seg(name)}/delete" data-confirm="Remove ${name} with all their hooks and tokens? This cannot be undone.">
<input type="hidden" name="_csrf" value="${ctx.csrf}"><button type="submit" class="danger">Remove user</button></form>`
}`;
    return sendHtml(
      reply,
      page(ctx, `User ${name}`, 'users', body),
      message?.text.includes('error') ? 400 : 200,
    );
  };

  const nameOf = (req: FastifyRequest) => (req.params as { name: string }).name;

  app.get('/users', async (req, reply) => listPage(req, reply));

  app.post('/users', async (req, reply) => {
    adminOnly(req);
    const f = formOf(req);
    const scopes = scopesOf(f.Scopes);
    let created = '';
    const refused = await orMessage(async () => {
      created = (await accounts.addUser((f.Name ?? '').trim(), scopes.length ? scopes : undefined)).name;
      return undefined;
    });
    if (refused) return listPage(req, reply, refused);
    return reply.redirect(`${root}/users/${seg(created)}`, 303);
  });

  app.get('/users/:name', async (req, reply) => userPage(req, reply, nameOf(req)));

  app.post('/users/:name/scopes', async (req, reply) => {
    adminOnly(req);
    const name = nameOf(req);
    const refused = await orMessage(async () => {
      await accounts.setScopes(name, scopesOf(formOf(req).Scopes));
      return undefined;
    });
    if (refused) return userPage(req, reply, name, refused);
    return reply.redirect(`${root}/users/${seg(name)}`, 303);
  });

  app.post('/users/:name/tokens', async (req, reply) => {
    adminOnly(req);
    const name = nameOf(req);
    const label = (formOf(req).Label ?? '').slice(0, 200);
    await accounts.getUser(name);
    const { record, token } = await accounts.createToken(name, label);
    req.log.info({ user: name, tokenId: record.id }, 'console: token created');
    return userPage(
      req,
      reply,
      name,
      html`<div class="notice" role="status"><p>Token <code>${record.id}</code> created. Copy it now: it is not shown again.</p>
<p>${copyable('new-token', token, true)}</p></div>`,
    );
  });

  app.post('/users/:name/tokens/:id/revoke', async (req, reply) => {
    adminOnly(req);
    const name = nameOf(req);
    const id = (req.params as { id: string }).id;
    const t = await users.getToken(id);
    if (!t || t.user !== name)
      throw new HookdError('NOT_FOUND', `user "${name}" has no token "${id.slice(0, 64)}"`);
    await users.revokeToken(id);
    return reply.redirect(`${root}/users/${seg(name)}`, 303);
  });

  app.post('/users/:name/delete', async (req, reply) => {
    adminOnly(req);
    const name = nameOf(req);
    if (name === ADMIN_USER) throw new HookdError('CONFLICT', 'the admin user cannot be removed');
    await accounts.getUser(name);
    await deps.hooks.deleteAll(name);
    await accounts.removeUser(name);
    deps.sessions.endUser(name);
    return reply.redirect(`${root}/users`, 303);
  });
}

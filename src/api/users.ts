import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HookdError } from '../errors/index.js';
import { type ApiFeature, OWN_PREFIX, principalOf, resource } from '../http-api/index.js';
import type { HookService } from '../service/index.js';
import type { Store, TokenRecord, UserRecord } from '../store/index.js';
import type { Accounts } from '../users/index.js';
import { ADMIN_USER, parsePermissions, permissionsOf } from '../users/index.js';
import { usersOpenApi } from './users-openapi.js';

export interface UserRouteDeps {
  accounts: Accounts;
  store: Pick<Store, 'listUsers' | 'listTokens' | 'getToken' | 'revokeToken'>;
  hooks: Pick<HookService, 'deleteAll'>;
}

/** Under hookd's reserved prefix (docs/DECISIONS.md "Path space"). */
const USERS = `${OWN_PREFIX}/users`;

/**
 * Users and tokens through the API (docs/API.md "Users and tokens"): the admin's, so that
 * operators never touch the database by hand. Everyone else gets 403, except that a user may read
 * their own record (`GET /_hookd/users/{self}`: what their hooks may observe). Token hashes never
 * leave the daemon; a token's value is in the answer to its creation only.
 */
export function userRoutes(app: FastifyInstance, deps: UserRouteDeps): void {
  const { accounts, store, hooks } = deps;
  const prefix = app.prefix;

  resource(app, USERS, {
    GET: async (req, reply) => {
      adminOnly(req);
      const users = await store.listUsers();
      return reply.send(users.map((u) => presentUser(u)));
    },
    POST: async (req, reply) => {
      adminOnly(req);
      const body = objectBody(req, ['Name', 'Scopes', 'Permissions']);
      if (typeof body.Name !== 'string') throw fieldError('Name', 'is required: the user name, e.g. "alice"');
      const user = await accounts.addUser(body.Name, body.Scopes, body.Permissions);
      req.log.info({ user: user.name, scopes: user.scopes, permissions: user.permissions }, 'user added');
      return reply
        .code(201)
        .header('Location', `${prefix}${USERS}/${encodeURIComponent(user.name)}`)
        .send(presentUser(user));
    },
  });

  resource(app, `${USERS}/:name`, {
    GET: async (req, reply) => {
      const name = nameOf(req);
      if (principalOf(req).user !== name) adminOnly(req);
      return reply.send(presentUser(await accounts.getUser(name)));
    },
    PUT: async (req, reply) => {
      adminOnly(req);
      const name = nameOf(req);
      const body = objectBody(req, ['Name', 'Scopes', 'Permissions', 'Created']);
      if (body.Name !== undefined && body.Name !== name)
        throw fieldError(
          'Name',
          `must be "${name}" (the name in the URL) or left out; users cannot be renamed`,
        );
      if (body.Scopes === undefined)
        throw fieldError('Scopes', 'is required: a list of path patterns or "own"');
      // Permissions left out stay as they are: a client that only knows Scopes keeps working.
      // Both are checked before either is written.
      const current = await accounts.getUser(name);
      const permissions =
        body.Permissions === undefined || samePermissions(current, body.Permissions)
          ? undefined
          : checkedPermissions(name, body.Permissions);
      let user = await accounts.setScopes(name, body.Scopes);
      req.log.info({ user: name, scopes: user.scopes }, 'user scopes replaced');
      if (permissions !== undefined) {
        user = await accounts.setPermissions(name, permissions);
        req.log.info({ user: name, permissions }, 'user permissions replaced');
      }
      return reply.send(presentUser(user));
    },
    DELETE: async (req, reply) => {
      adminOnly(req);
      const name = nameOf(req);
      if (name === ADMIN_USER)
        throw new HookdError(
          'CONFLICT',
          'the admin user cannot be removed; it is the one that manages the others',
        );
      await accounts.getUser(name);
      // Through the hook service, so that this daemon's index and deliveries follow at once.
      const removedHooks = await hooks.deleteAll(name);
      await accounts.removeUser(name);
      req.log.info({ user: name, hooks: removedHooks }, 'user removed');
      return reply.code(204).send();
    },
  });

  resource(app, `${USERS}/:name/tokens`, {
    GET: async (req, reply) => {
      adminOnly(req);
      const name = nameOf(req);
      await accounts.getUser(name);
      return reply.send((await store.listTokens(name)).map(presentToken));
    },
    POST: async (req, reply) => {
      adminOnly(req);
      const name = nameOf(req);
      const body = req.body === undefined ? {} : objectBody(req, ['Label']);
      if (body.Label !== undefined && (typeof body.Label !== 'string' || body.Label.length > 200))
        throw fieldError('Label', 'must be a string of at most 200 characters');
      await accounts.getUser(name);
      const { record, token } = await accounts.createToken(name, (body.Label as string | undefined) ?? '');
      req.log.info({ user: name, tokenId: record.id }, 'token created');
      return reply
        .code(201)
        .header('Location', `${prefix}${USERS}/${encodeURIComponent(name)}/tokens/${record.id}`)
        .header('Cache-Control', 'no-store')
        .send({ ...presentToken(record), Token: token });
    },
  });

  resource(app, `${USERS}/:name/tokens/:id`, {
    DELETE: async (req, reply) => {
      adminOnly(req);
      const name = nameOf(req);
      const id = (req.params as { id: string }).id;
      const t = await store.getToken(id);
      if (!t || t.user !== name)
        throw new HookdError('NOT_FOUND', `user "${name}" has no token with Id "${id.slice(0, 64)}"`);
      await store.revokeToken(id);
      req.log.info({ user: name, tokenId: id }, 'token revoked');
      return reply.code(204).send();
    },
  });
}

function adminOnly(req: FastifyRequest): void {
  if (principalOf(req).user !== ADMIN_USER) {
    throw new HookdError(
      'FORBIDDEN',
      `only the admin user manages users and tokens; you are "${principalOf(req).user}" (you may read your own record: GET /_hookd/users/${principalOf(req).user})`,
    );
  }
}

function nameOf(req: FastifyRequest): string {
  return (req.params as { name: string }).name;
}

function objectBody(req: FastifyRequest, fields: string[]): Record<string, unknown> {
  const b = req.body;
  if (b === null || typeof b !== 'object' || Array.isArray(b))
    throw new HookdError('BAD_REQUEST', `the body must be a JSON object with ${fields.join(', ')}`);
  const o = b as Record<string, unknown>;
  const unknown = Object.keys(o).filter((k) => !fields.includes(k));
  if (unknown.length)
    throw new HookdError(
      'BAD_REQUEST',
      `unknown field(s) ${unknown.join(', ')}; allowed: ${fields.join(', ')}`,
      {
        errors: unknown.map((field) => ({ field, message: 'is not a field of this resource' })),
      },
    );
  return o;
}

function fieldError(field: string, message: string): HookdError {
  return new HookdError('BAD_REQUEST', `${field} ${message}`, { errors: [{ field, message }] });
}

function presentUser(u: UserRecord): {
  Name: string;
  Scopes: string[];
  Permissions: string[];
  Created: string;
} {
  return { Name: u.name, Scopes: u.scopes ?? [], Permissions: permissionsOf(u), Created: u.created };
}

/** `Permissions` as sent, refused up front when malformed or meant for the admin. */
function checkedPermissions(name: string, sent: unknown): string[] {
  const r = parsePermissions(sent);
  if (!r.ok)
    throw new HookdError('VALIDATION_FAILED', `Permissions: ${r.errors.join('; ')}`, {
      errors: r.errors.map((message) => ({ field: 'Permissions', message })),
    });
  if (name === ADMIN_USER)
    throw new HookdError(
      'CONFLICT',
      'the admin user has every permission, always; its Permissions cannot be changed',
    );
  return r.permissions;
}

/** Whether `Permissions` as sent is what the user has in effect already (the admin's included). */
function samePermissions(u: UserRecord, sent: unknown): boolean {
  if (!Array.isArray(sent)) return false;
  const have = permissionsOf(u);
  return sent.length === have.length && sent.every((p) => have.includes(p));
}

/** A token as the API shows it: never its hash. */
function presentToken(t: TokenRecord): {
  Id: string;
  User: string;
  Label: string;
  Created: string;
  LastUsed?: string;
} {
  // LastUsed: to within a minute; absent while never used since it was recorded.
  return {
    Id: t.id,
    User: t.user,
    Label: t.label,
    Created: t.created,
    ...(t.lastUsed !== undefined && { LastUsed: t.lastUsed }),
  };
}

/** Users and tokens (admin). */
export function usersFeature(deps: UserRouteDeps): ApiFeature {
  return { name: 'users', register: (api) => userRoutes(api, deps), openApi: usersOpenApi() };
}

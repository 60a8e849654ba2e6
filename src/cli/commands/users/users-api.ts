import type { ApiClient } from '../../api-client.js';
import { UsageError } from '../../exit-codes.js';
import type { Column } from '../../output.js';

/** A user as `/_hookd/users` shows it. */
export interface UserView {
  Name: string;
  Scopes: string[];
  /** What the admin granted beyond owning hooks (`report`); absent from daemons that predate permissions. */
  Permissions?: string[];
  Created?: string;
}

/** A token as `/_hookd/users/{name}/tokens` shows it (`Token` only in the answer to its creation). */
export interface TokenView {
  Id: string;
  User: string;
  Label: string;
  Created: string;
  Token?: string;
}

/** hookd's reserved prefix: users and tokens live under it (docs/API.md "Users and tokens"). */
const USERS = '/_hookd/users';
const enc = encodeURIComponent;

/** The users and tokens calls, on the shared client (admin only, except reading oneself). */
export const usersApi = {
  list: async (c: ApiClient) => (await c.call<UserView[]>('GET', USERS)).body,
  get: async (c: ApiClient, name: string) => (await c.call<UserView>('GET', `${USERS}/${enc(name)}`)).body,
  add: async (c: ApiClient, name: string, scopes?: string[], permissions?: string[]) =>
    (
      await c.call<UserView>('POST', USERS, {
        Name: name,
        ...(scopes !== undefined && { Scopes: scopes }),
        ...(permissions !== undefined && { Permissions: permissions }),
      })
    ).body,
  setScopes: async (c: ApiClient, name: string, scopes: string[], permissions?: string[]) =>
    (
      await c.call<UserView>('PUT', `${USERS}/${enc(name)}`, {
        Name: name,
        Scopes: scopes,
        ...(permissions !== undefined && { Permissions: permissions }),
      })
    ).body,
  remove: async (c: ApiClient, name: string) => {
    await c.call('DELETE', `${USERS}/${enc(name)}`);
  },
  tokens: async (c: ApiClient, name: string) =>
    (await c.call<TokenView[]>('GET', `${USERS}/${enc(name)}/tokens`)).body,
  createToken: async (c: ApiClient, name: string, label?: string) =>
    (
      await c.call<TokenView>(
        'POST',
        `${USERS}/${enc(name)}/tokens`,
        label === undefined ? {} : { Label: label },
      )
    ).body,
  revokeToken: async (c: ApiClient, name: string, id: string) => {
    await c.call('DELETE', `${USERS}/${enc(name)}/tokens/${enc(id)}`);
  },
};

export const USER_COLUMNS: Column<UserView>[] = [
  { header: 'NAME', value: (u) => u.Name, paint: (t, _u, c) => c.cyan(t) },
  { header: 'SCOPES', value: (u) => u.Scopes.join(','), shrink: true },
  { header: 'PERMISSIONS', value: (u) => (u.Permissions ?? []).join(',') },
  { header: 'CREATED', value: (u) => u.Created ?? '' },
];

export const TOKEN_COLUMNS: Column<TokenView>[] = [
  { header: 'ID', value: (t) => t.Id, paint: (x, _t, c) => c.cyan(x) },
  { header: 'USER', value: (t) => t.User },
  { header: 'CREATED', value: (t) => t.Created },
  { header: 'LABEL', value: (t) => t.Label, shrink: true },
];

/**
 * Scope arguments: each a path pattern or `own`; commas also separate (`/a,/b`). One that is
 * neither is refused here, naming it: the server would judge the combined list and answer about
 * its index there, which is not what was typed.
 */
export function scopeArgs(values: string[]): string[] {
  const scopes = values
    .flatMap((v) => v.split(','))
    .map((s) => s.trim())
    .filter(Boolean);
  for (const s of scopes) {
    if (s === 'own' || s.startsWith('/')) continue;
    throw new UsageError(
      `"${s}" is not a scope: a scope is the word "own" or a path pattern starting with /`,
      {
        ...(/^[A-Za-z0-9*(]/.test(s) && s.toLowerCase() !== 'own' && { hint: `did you mean /${s}?` }),
      },
    );
  }
  return scopes;
}

/** `--permission` values: each a permission name (`report`); commas also separate. */
export function permissionArgs(values: string[] | undefined): string[] {
  return (values ?? [])
    .flatMap((v) => v.split(','))
    .map((s) => s.trim())
    .filter(Boolean);
}

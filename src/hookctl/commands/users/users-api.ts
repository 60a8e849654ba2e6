import type { Token, User } from '../../../client/index.js';
import type { ApiClient } from '../../api-client.js';
import { UsageError } from '../../exit-codes.js';
import type { Column } from '../../output.js';

/** A user as `/_hookd/users` shows it; its Permissions as words the server checks. */
export type UserView = Omit<User, 'Permissions'> & { Permissions?: string[] };

/** A token as `/_hookd/users/{name}/tokens` shows it (`Token` only in the answer to its creation). */
export type TokenView = Token;

/** The users and tokens calls, on the shared client (admin only, except reading oneself). */
export const usersApi = {
  list: (c: ApiClient): Promise<UserView[]> => c.users(),
  get: (c: ApiClient, name: string): Promise<UserView> => c.user(name),
  add: (c: ApiClient, name: string, scopes?: string[], permissions?: string[]): Promise<UserView> =>
    c.addUser({
      Name: name,
      ...(scopes !== undefined && { Scopes: scopes }),
      ...(permissions !== undefined && { Permissions: permissions as User['Permissions'] }),
    } as User),
  setScopes: (c: ApiClient, name: string, scopes: string[], permissions?: string[]): Promise<UserView> =>
    c.replaceUser(name, {
      Name: name,
      Scopes: scopes,
      ...(permissions !== undefined && { Permissions: permissions as User['Permissions'] }),
    }),
  remove: (c: ApiClient, name: string) => c.removeUser(name),
  tokens: (c: ApiClient, name: string) => c.tokens(name),
  createToken: (c: ApiClient, name: string, label?: string) => c.createToken(name, label),
  revokeToken: (c: ApiClient, name: string, id: string) => c.revokeToken(name, id),
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

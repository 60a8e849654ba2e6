/**
 * Permissions: what the admin grants a user beyond owning hooks (docs/DECISIONS.md
 * "Reports, identities and listeners"). Pure: strings in, verdicts out.
 *
 * - `report`: the user's tokens may report requests made by anyone (`POST /_hookd/report` with any
 *   `User`), and such reports fire every matching hook as a proxied request would. It is meant for
 *   the token of a service that reports what it served. Without it a report is made by its caller:
 *   `User` must be the caller or left out, and only the caller's own hooks fire.
 *
 * - `portal`: the user's tokens may make portal links (`POST /_hookd/portal-links`) for any user
 *   but the admin: one-time sign-ins to the embeddable portal (src/portal/). It is meant for the
 *   token of the service's back end that embeds the portal in its own pages.
 *
 * The admin has every permission, always; its stored list is not consulted.
 */
import type { UserRecord } from '../store/index.js';
import { didYouMean } from '../util/index.js';
import { ADMIN_USER } from './scopes.js';

export const REPORT_PERMISSION = 'report';
export const PORTAL_PERMISSION = 'portal';
export const KNOWN_PERMISSIONS: readonly string[] = Object.freeze([REPORT_PERMISSION, PORTAL_PERMISSION]);
export const PERMISSIONS_RULE = `a list of permissions; known: ${KNOWN_PERMISSIONS.join(', ')}`;

/** The permissions a user has in effect (the admin: all of them). */
export function permissionsOf(user: Pick<UserRecord, 'name' | 'permissions'>): string[] {
  if (user.name === ADMIN_USER) return [...KNOWN_PERMISSIONS];
  return (user.permissions ?? []).filter((p) => KNOWN_PERMISSIONS.includes(p));
}

/** Whether the user may report requests made by anyone else. */
export function mayReportForAnyone(user: Pick<UserRecord, 'name' | 'permissions'> | undefined): boolean {
  return user !== undefined && permissionsOf(user).includes(REPORT_PERMISSION);
}

/** Whether the user may make portal links for other users. */
export function mayMakePortalLinks(user: Pick<UserRecord, 'name' | 'permissions'> | undefined): boolean {
  return user !== undefined && permissionsOf(user).includes(PORTAL_PERMISSION);
}

/** A client's `Permissions`, checked: known names only, duplicates dropped, in the order given. */
export function parsePermissions(
  input: unknown,
): { ok: true; permissions: string[] } | { ok: false; errors: string[] } {
  if (!Array.isArray(input) || input.some((p) => typeof p !== 'string'))
    return { ok: false, errors: [`must be ${PERMISSIONS_RULE}`] };
  const errors = (input as string[])
    .filter((p) => !KNOWN_PERMISSIONS.includes(p))
    .map(
      (p) =>
        `"${p.slice(0, 64)}" is not a permission; known: ${KNOWN_PERMISSIONS.join(', ')}${didYouMean(p, KNOWN_PERMISSIONS)}`,
    );
  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, permissions: [...new Set(input as string[])] };
}

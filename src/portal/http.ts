import type { FastifyReply } from 'fastify';
import { CONSOLE_CSP } from '../console/index.js';
import { type Brand, logoSource } from './brand.js';

export const PORTAL_COOKIE = 'hookd_portal';

/**
 * The portal's session cookie. Over HTTPS it is `SameSite=None; Secure; Partitioned`: sent inside
 * the embedding page's frame on another site, and kept in a jar of that site's own (CHIPS), so it
 * is not a third-party cookie that follows the user elsewhere. Over plain HTTP a browser refuses
 * `SameSite=None` without `Secure`, so it is `SameSite=Lax`: the portal works at the top level and
 * in a frame of the same site, not in a frame of another site (docs/DECISIONS.md).
 */
export function portalCookie(value: string, path: string, https: boolean, maxAge?: number): string {
  const same = https ? 'Secure; SameSite=None; Partitioned' : 'SameSite=Lax';
  return `${PORTAL_COOKIE}=${value}; Path=${path}; HttpOnly; ${same}${maxAge !== undefined ? `; Max-Age=${maxAge}` : ''}`;
}

/**
 * The console's policy with two differences: frames only from the listed origins (none: 'none'),
 * and images also from the brand's logo origin.
 */
export function portalCsp(frameAncestors: readonly string[], brand: Brand): string {
  const ancestors = frameAncestors.length > 0 ? frameAncestors.join(' ') : "'none'";
  const logo = brand.LogoUrl ? logoSource(brand.LogoUrl) : undefined;
  return CONSOLE_CSP.replace("frame-ancestors 'none'", `frame-ancestors ${ancestors}`).replace(
    "img-src 'self' data:",
    `img-src 'self' data:${logo && logo !== "'self'" ? ` ${logo}` : ''}`,
  );
}

/** The headers of every portal answer. */
export function securityHeaders(reply: FastifyReply, frameAncestors: readonly string[], brand: Brand): void {
  reply.header('content-security-policy', portalCsp(frameAncestors, brand));
  reply.header('x-content-type-options', 'nosniff');
  reply.header('referrer-policy', 'same-origin');
  // Browsers that know frame-ancestors ignore X-Frame-Options; older ones get DENY unless framing is allowed.
  if (frameAncestors.length === 0) reply.header('x-frame-options', 'DENY');
  if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
}

import { asList, asText, type OptionSpec, refuse } from './spec.js';
import { httpUrl, stringList, text } from './values.js';

/**
 * An origin a page may frame the portal from: `https://app.example.com` (a port if not the
 * scheme's own); no path, no wildcard, so that `frame-ancestors` and `postMessage` name it exactly.
 */
function origins(v: unknown): string[] {
  const list = stringList(v).flatMap((s) => s.split(/[\s,]+/).filter(Boolean));
  return list.map((o) => {
    const u = URL.canParse(o) ? new URL(o) : undefined;
    if (!u || (u.protocol !== 'https:' && u.protocol !== 'http:') || u.hostname === '')
      refuse(`"${o}" is not an origin such as https://app.example.com`);
    if (u.pathname !== '/' || u.search || u.hash || u.username)
      refuse(`"${o}" is not an origin: leave out the path (the closest origin is ${u.origin})`);
    return u.origin;
  });
}

/** The embeddable portal (src/portal/): who may frame it, its look, where browsers reach it. */
export const PORTAL_OPTIONS = {
  /** Origins whose pages may show the portal in a frame (CSP frame-ancestors); none by default. */
  portalFrameAncestors: {
    fileKey: 'portal.frameAncestors',
    flag: '--portal-frame-ancestors <origins>',
    env: 'HOOKD_PORTAL_FRAME_ANCESTORS',
    description:
      "origins whose pages may frame the portal, e.g. https://app.example.com (repeatable; default none: frame-ancestors 'none')",
    fromText: asList,
    repeatable: true,
    parse: origins,
    default: [],
  },
  /** The portal's look: a JSON file with Title, LogoUrl, Accent and Theme (read at start). */
  portalBrandFile: {
    fileKey: 'portal.brandFile',
    flag: '--portal-brand-file <file>',
    env: 'HOOKD_PORTAL_BRAND_FILE',
    description: "the portal's look: a JSON file with Title, LogoUrl, Accent, Theme (default: hookd's)",
    fromText: asText,
    parse: text,
  },
  /**
   * Where browsers reach the console's listener (behind a TLS proxy, say): portal links are made
   * on it. Absent: the listener's own address (or, with --console-on-proxy, --public-base-url).
   */
  portalBaseUrl: {
    fileKey: 'portal.baseUrl',
    flag: '--portal-base-url <url>',
    env: 'HOOKD_PORTAL_BASE_URL',
    description:
      "the console listener's URL as browsers reach it, for portal links (default: the listener's own address)",
    fromText: asText,
    parse: (v: unknown): string => httpUrl()(v).replace(/\/+$/, ''),
  },
} as const satisfies Record<string, OptionSpec>;

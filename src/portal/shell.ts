import { type Html, html, type PageContext, type Section } from '../console/index.js';
import { PORTAL_SCOPES } from './access.js';
import type { PortalEvent, PortalSession } from './sessions.js';

export interface ShellOptions {
  /** The portal's root path, e.g. `/_hookd/portal`. */
  root: string;
  /** Origins that may frame the portal: portal.js posts its events to these only. */
  parentOrigins: readonly string[];
}

/** The theme a page opens in: the brand's, `light` unless it says otherwise. */
function themeOf(session: Pick<PortalSession, 'brand'>): string {
  return session.brand.Theme ?? 'light';
}

/** The start of every portal document, signed in or not. */
export function portalHead(root: string, title: string, theme: string, brandTitle: string): Html {
  return html`<!doctype html>
<html lang="en" data-theme="${theme}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · ${brandTitle}</title>
<link rel="icon" href="${root}/assets/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="${root}/assets/console.css">
<link rel="stylesheet" href="${root}/assets/portal.css">
<link rel="stylesheet" href="${root}/brand.css">`;
}

/**
 * The portal's shell around the console's pages: the service's title, logo and colours; only the
 * sections the link allows; no sign-out, users or operator links. Classes on <body> say what the
 * session may not do, so portal.css hides those buttons (the server refuses them regardless).
 */
export function portalShell(
  opts: ShellOptions,
  session: PortalSession,
): (ctx: PageContext, title: string, section: Section, body: Html) => Html {
  const { root } = opts;
  const brandTitle = session.brand.Title ?? 'Webhooks';
  const missing = PORTAL_SCOPES.filter((s) => !session.scopes.includes(s)).map(
    (s) => `no-${s.replace(':', '-')}`,
  );
  const classes = ['portal', ...(session.readOnly ? ['read-only'] : []), ...missing].join(' ');
  return (ctx, title, section, body) => {
    // Shown once: the events waiting since the last page go out with this one.
    const events: PortalEvent[] = session.pending.splice(0);
    const link = (s: Section, href: string, label: string) =>
      html`<a href="${root}${href}"${section === s ? html` aria-current="page"` : ''}>${label}</a>`;
    return html`${portalHead(root, title, themeOf(session), brandTitle)}
<link rel="stylesheet" href="${root}/assets/uPlot.min.css">
<meta name="htmx-config" content="${JSON.stringify({ includeIndicatorStyles: false, allowEval: false, allowScriptTags: false, selfRequestsOnly: true })}">
<meta name="csrf-token" content="${ctx.csrf}">
<meta name="console-root" content="${root}">
<meta name="portal-parent-origins" content="${JSON.stringify(opts.parentOrigins)}">
<meta name="portal-events" content="${JSON.stringify(events)}">
<script src="${root}/assets/htmx.min.js" defer></script>
<script src="${root}/assets/uPlot.iife.min.js" defer></script>
<script src="${root}/assets/console.js" defer></script>
<script src="${root}/assets/portal.js" defer></script>
</head>
<body class="${classes}">
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <span class="brand">${session.brand.LogoUrl ? html`<img class="logo" src="${session.brand.LogoUrl}" alt="" height="24">` : ''}${brandTitle}</span>
  <nav aria-label="Webhooks">
    ${link('hooks', '/hooks', 'Hooks')}
    ${session.scopes.includes('live') ? link('live', '/live', 'Live') : ''}
  </nav>
  <p class="who">${ctx.user}${session.readOnly ? html` <span class="badge">read-only</span>` : ''}</p>
</header>
<main id="main">
<h1>${title}</h1>
${body}
</main>
</body>
</html>`;
  };
}

/** A page outside a session (a used or expired link, an error): the brand's look, no navigation. */
export function portalBarePage(
  root: string,
  title: string,
  body: Html,
  theme = 'light',
  brandTitle = 'Webhooks',
): Html {
  return html`${portalHead(root, title, theme, brandTitle)}
</head>
<body class="portal bare">
<main id="main">
<h1>${title}</h1>
${body}
</main>
</body>
</html>`;
}

import { type Html, html } from './html.js';

export interface PageContext {
  /** The console's root path, e.g. `/_hookd/console` (no trailing slash). */
  root: string;
  user: string;
  csrf: string;
  admin: boolean;
}

export type Section = 'overview' | 'hooks' | 'live' | 'users' | 'none';

/** The shell of every signed-in page: navigation, the CSRF token for htmx, the assets. */
export function page(ctx: PageContext, title: string, section: Section, body: Html): Html {
  const link = (s: Section, href: string, label: string) =>
    html`<a href="${ctx.root}${href}"${section === s ? html` aria-current="page"` : ''}>${label}</a>`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · hookd</title>
<meta name="htmx-config" content="${JSON.stringify({ includeIndicatorStyles: false, allowEval: false, allowScriptTags: false, selfRequestsOnly: true })}">
<meta name="csrf-token" content="${ctx.csrf}">
<meta name="console-root" content="${ctx.root}">
${assets(ctx.root)}
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <span class="brand">hookd</span>
  <nav aria-label="Console">
    ${link('overview', '/', 'Overview')}
    ${link('hooks', '/hooks', 'Hooks')}
    ${link('live', '/live', 'Live')}
    ${ctx.admin ? link('users', '/users', 'Users') : ''}
  </nav>
  <form class="who" method="post" action="${ctx.root}/signout">
    <input type="hidden" name="_csrf" value="${ctx.csrf}">
    <span>${ctx.user}</span> <button type="submit" class="link">Sign out</button>
  </form>
</header>
<main id="main">
<h1>${title}</h1>
${body}
</main>
</body>
</html>`;
}

function assets(root: string): Html {
  return html`<link rel="stylesheet" href="${root}/assets/uPlot.min.css">
<link rel="stylesheet" href="${root}/assets/console.css">
<script src="${root}/assets/htmx.min.js" defer></script>
<script src="${root}/assets/uPlot.iife.min.js" defer></script>
<script src="${root}/assets/console.js" defer></script>`;
}

/** A page for someone not signed in (sign-in, errors before sign-in). */
export function barePage(root: string, title: string, body: Html): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · hookd</title>
<link rel="stylesheet" href="${root}/assets/console.css">
<script src="${root}/assets/console.js" defer></script>
</head>
<body class="bare">
<main id="main">
<h1>${title}</h1>
${body}
</main>
</body>
</html>`;
}

export function time(ms: number | null | undefined): Html {
  if (ms === null || ms === undefined) return html`–`;
  const iso = new Date(ms).toISOString();
  return html`<time datetime="${iso}">${iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}</time>`;
}

export function statusBadge(status: string, code?: number | null): Html {
  const text = code !== null && code !== undefined ? `${status} ${code}` : status;
  return html`<span class="badge ${status}">${text}</span>`;
}

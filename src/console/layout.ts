import { type Html, html } from './html.js';

export interface PageContext {
  /** The console's root path, e.g. `/_hookd/console` (no trailing slash). */
  root: string;
  user: string;
  csrf: string;
  admin: boolean;
  /**
   * Another shell for the same pages (the embeddable portal's, src/portal/): its own look, its own
   * navigation, no operator links. Absent: the console's.
   */
  shell?: (ctx: PageContext, title: string, section: Section, body: Html) => Html;
}

/** How every console document begins, signed in or not: up to and including its title. */
function documentStart(title: string): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · hookd</title>`;
}

/** How every console document ends: the page's heading and body as its main content. */
function documentEnd(title: string, body: Html): Html {
  return html`<main id="main">
<h1>${title}</h1>
${body}
</main>
</body>
</html>`;
}

export type Section = 'overview' | 'hooks' | 'live' | 'users' | 'none';

/** The shell of every signed-in page: navigation, the CSRF token for htmx, the assets. */
export function page(ctx: PageContext, title: string, section: Section, body: Html): Html {
  if (ctx.shell) return ctx.shell(ctx, title, section, body);
  const link = (s: Section, href: string, label: string) =>
    html`<a href="${ctx.root}${href}"${section === s ? html` aria-current="page"` : ''}>${label}</a>`;
  return html`${documentStart(title)}
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
${documentEnd(title, body)}`;
}

/** The icon, so that no browser asks for /favicon.ico (which would go through the proxy upstream). */
function icon(root: string): Html {
  return html`<link rel="icon" href="${root}/assets/favicon.svg" type="image/svg+xml">`;
}

function assets(root: string): Html {
  return html`${icon(root)}
<link rel="stylesheet" href="${root}/assets/uPlot.min.css">
<link rel="stylesheet" href="${root}/assets/console.css">
<script src="${root}/assets/htmx.min.js" defer></script>
<script src="${root}/assets/uPlot.iife.min.js" defer></script>
<script src="${root}/assets/console.js" defer></script>`;
}

/** A page for someone not signed in (sign-in, errors before sign-in). */
export function barePage(root: string, title: string, body: Html): Html {
  return html`${documentStart(title)}
${icon(root)}
<link rel="stylesheet" href="${root}/assets/console.css">
<script src="${root}/assets/console.js" defer></script>
</head>
<body class="bare">
${documentEnd(title, body)}`;
}

/**
 * Every time on every page, in one format: relative first ("3 min ago", "in 20 s"), then the
 * absolute UTC time ("2026-11-25 09:28:00 UTC"). console.js keeps the relative part current and
 * the live page writes its rows the same way (`formatTime` there).
 */
export function time(ms: number | string | null | undefined, now = Date.now()): Html {
  if (ms === null || ms === undefined) return html`–`;
  const t = typeof ms === 'string' ? Date.parse(ms) : ms;
  if (Number.isNaN(t)) return html`${String(ms)}`;
  const iso = new Date(t).toISOString();
  return html`<time datetime="${iso}" class="when"><span class="rel">${relative(t - now)}</span> <span class="abs">${absolute(iso)}</span></time>`;
}

export function absolute(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}

/** A signed duration from now as people say it: "12 s ago", "in 3 min", "just now". */
export function relative(deltaMs: number): string {
  const s = Math.round(Math.abs(deltaMs) / 1000);
  if (s < 2) return 'just now';
  const text =
    s < 90
      ? `${s} s`
      : s < 5400
        ? `${Math.round(s / 60)} min`
        : s < 129600
          ? `${Math.round(s / 3600)} h`
          : `${Math.round(s / 86400)} d`;
  return deltaMs < 0 ? `${text} ago` : `in ${text}`;
}

export function statusBadge(status: string, code?: number | null): Html {
  const text = code !== null && code !== undefined ? `${status} ${code}` : status;
  return html`<span class="badge ${status}">${text}</span>`;
}

/** A value with a Copy button beside it (console.js copies the element the button names). */
export function copyable(id: string, value: string, secret = false): Html {
  return html`<code${secret ? html` class="secret"` : html``} id="${id}">${value}</code> <button type="button" class="copy" data-copy="${id}">Copy</button>`;
}

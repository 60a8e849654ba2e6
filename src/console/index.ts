// The public surface of console/: what other folders may import. Everything else is its own.
export { assetsOnFirstUse } from './assets.js';
export { CONSOLE_CSP, CONSOLE_PATH, type ConsoleDeps, consoleFeature, cookieValue } from './console.js';
export { enterPages, userWorldPages } from './embedding.js';
export { type Html, html, trusted } from './html.js';
export { barePage, type PageContext, type Section } from './layout.js';
export { consoleListenerFor, consoleServedHere } from './listener.js';
export type { PageDeps } from './page-deps.js';
export { checkCsrf, isHttps, pageErrorOf, pagePluginBasics } from './page-plugin.js';
export { sendHtml } from './respond.js';

// The public surface of server/: what other folders may import. Everything else is its own.
export { apiPathMatcher } from './api-paths.js';
export { type App, buildApp, type UpgradeHandler } from './app.js';
export { ReverseProxy } from './proxy.js';
export { requestUriBuilder } from './request-uri.js';
export { type TailEvent, TailServer, type TailSource } from './tail.js';
export { TrustedProxies } from './trusted-proxies.js';

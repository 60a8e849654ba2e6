/**
 * Egress through a forward proxy: `--callback-proxy URL`. The pinned dispatcher
 * (src/transports/http/pinned-dispatcher.ts) judges the real target first, then opens its connection
 * through `connectTunnel` instead of directly; the proxy's own address is never judged.
 */
export { type EgressProxy, egressProxyOf, proxyUrlProblem } from './egress-proxy.js';
export { connectTunnel, ProxyRefusedError, type Tunnel } from './tunnel.js';

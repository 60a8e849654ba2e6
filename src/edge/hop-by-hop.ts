/**
 * RFC 9110 §7.6.1: headers meaningful for one connection only, never relayed to the next hop
 * in either direction. The one list both proxy paths start from (the upgrade gate for
 * WebSocket tunnels, src/server/ for ordinary requests); each adds only what its direction needs.
 */
export const HOP_BY_HOP: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'proxy-authenticate',
]);

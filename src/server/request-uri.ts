import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { TrustedProxies } from './trusted-proxies.js';

/**
 * `$REQUEST_URI`: the absolute URI as the client used it. A configured public base URL wins;
 * otherwise scheme and host come from the request, with `X-Forwarded-Proto`/`-Host` believed only
 * from trusted proxies (anyone else could make a callback link point anywhere).
 */
export function requestUriBuilder(
  publicBaseUrl: string | undefined,
  trusted: TrustedProxies,
): (req: IncomingMessage, socket?: Socket) => string {
  if (publicBaseUrl) return (req) => publicBaseUrl + (req.url ?? '/');
  return (req, socket = req.socket) => {
    let proto = socket && 'encrypted' in socket && socket.encrypted ? 'https' : 'http';
    let host = req.headers.host ?? 'localhost';
    if (!trusted.empty && trusted.trusts(socket?.remoteAddress)) {
      const fp = firstValue(req.headers['x-forwarded-proto']);
      const fh = firstValue(req.headers['x-forwarded-host']);
      if (fp === 'http' || fp === 'https') proto = fp;
      if (fh) host = fh;
    }
    return `${proto}://${host}${req.url ?? '/'}`;
  };
}

function firstValue(v: string | string[] | undefined): string | undefined {
  const s = Array.isArray(v) ? v[0] : v;
  return s?.split(',')[0]?.trim() || undefined;
}

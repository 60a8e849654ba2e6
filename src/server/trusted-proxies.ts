import ipaddr from 'ipaddr.js';
import { UNIX_PEER } from '../ops/index.js';

/**
 * Which peers' `X-Forwarded-*` headers (and identity header) are believed (SPEC §5
 * `$REQUEST_URI`): those in the `--trusted-proxy` ranges and, when hookd listens on a unix socket,
 * every peer on it (the socket file's mode and group say who may connect: the front proxy).
 */
export class TrustedProxies {
  private readonly ranges: [ipaddr.IPv4 | ipaddr.IPv6, number][];

  constructor(
    entries: readonly string[],
    private readonly unixSocket = false,
  ) {
    this.ranges = entries.map((e) => {
      const text = e.includes('/') ? e : `${e}/${e.includes(':') ? 128 : 32}`;
      try {
        return ipaddr.parseCIDR(text);
      } catch {
        throw new Error(`trusted proxy "${e}" is not an IP address or CIDR`);
      }
    });
  }

  get empty(): boolean {
    return this.ranges.length === 0 && !this.unixSocket;
  }

  trusts(address: string | undefined): boolean {
    if (address === UNIX_PEER) return this.unixSocket;
    if (!address || this.ranges.length === 0 || !ipaddr.isValid(address)) return false;
    let ip = ipaddr.parse(address);
    if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress())
      ip = (ip as ipaddr.IPv6).toIPv4Address();
    return this.ranges.some(([net, bits]) => net.kind() === ip.kind() && ip.match(net, bits));
  }
}

import ipaddr from 'ipaddr.js';

/** Which peers' `X-Forwarded-*` headers are believed (SPEC §5 `$REQUEST_URI`). */
export class TrustedProxies {
  private readonly ranges: [ipaddr.IPv4 | ipaddr.IPv6, number][];

  constructor(entries: readonly string[]) {
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
    return this.ranges.length === 0;
  }

  trusts(address: string | undefined): boolean {
    if (!address || this.ranges.length === 0 || !ipaddr.isValid(address)) return false;
    let ip = ipaddr.parse(address);
    if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress())
      ip = (ip as ipaddr.IPv6).toIPv4Address();
    return this.ranges.some(([net, bits]) => net.kind() === ip.kind() && ip.match(net, bits));
  }
}

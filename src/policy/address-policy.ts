/**
 * Which IP addresses a callback may be sent to (SPEC §10). Pure: no DNS, no sockets; the
 * create-time check (`callback-target.ts`) and the connect-time check
 * (`transports/http/pinned-dispatcher.ts`) both ask this one policy.
 */
import ipaddr from 'ipaddr.js';

type IPv4 = ipaddr.IPv4;
type IPv6 = ipaddr.IPv6;
type Addr = IPv4 | IPv6;

/** The answer for one address. A denial names the range that matched and what would open it. */
export type AddressVerdict =
  | { allowed: true }
  | {
      allowed: false;
      /** The address that was judged, in canonical form (`::ffff:127.0.0.1` for a mapped one). */
      address: string;
      /** The range that matched, name then CIDR: `loopback 127.0.0.0/8`. */
      range: string;
      /**
       * What the address is, phrased to follow "which is": `loopback (127.0.0.0/8)`, or for an
       * embedded form `the 6to4 form of 10.0.0.1, which is private (10.0.0.0/8)`.
       */
      reason: string;
      /** The `--allow-callback-net` value that would allow this address. */
      allowWith: string;
      /** True for a cloud metadata address, which only an exact allow entry opens. */
      metadata: boolean;
    };

export type AddressDenial = Extract<AddressVerdict, { allowed: false }>;

/** A bad `--allow-callback-net` entry; the message names it and shows what is accepted. */
export class CidrError extends Error {
  readonly entry: string;
  constructor(entry: string, problem: string) {
    super(
      `invalid --allow-callback-net entry "${entry}": ${problem} ` +
        '(expected an IPv4 or IPv6 address or CIDR, e.g. 10.0.0.0/8, fd00::/8 or 192.0.2.7)',
    );
    this.name = 'CidrError';
    this.entry = entry;
  }
}

interface NamedRange {
  name: string;
  cidr: string;
  net: [Addr, number];
}

function named(name: string, cidr: string): NamedRange {
  return { name, cidr, net: ipaddr.parseCIDR(cidr) };
}

// First match wins, so a more specific block comes before the block that contains it.
// Sources: the IANA IPv4/IPv6 Special-Purpose Address Registries; a block whose "globally
// reachable" column is False is denied. A few small blocks marked reachable (AS112, AMT anycast)
// are left alone in IPv4 because they are ordinary public anycast.
const IPV4_DENIED: NamedRange[] = [
  named('unspecified', '0.0.0.0/32'),
  named('reserved "this network"', '0.0.0.0/8'),
  named('private', '10.0.0.0/8'),
  named('carrier-grade NAT', '100.64.0.0/10'),
  named('loopback', '127.0.0.0/8'),
  named('link-local', '169.254.0.0/16'),
  named('private', '172.16.0.0/12'),
  named('reserved for IETF protocol assignments', '192.0.0.0/24'),
  named('documentation', '192.0.2.0/24'),
  named('deprecated 6to4 relay anycast', '192.88.99.0/24'),
  named('private', '192.168.0.0/16'),
  named('benchmarking', '198.18.0.0/15'),
  named('documentation', '198.51.100.0/24'),
  named('documentation', '203.0.113.0/24'),
  named('multicast', '224.0.0.0/4'),
  named('broadcast', '255.255.255.255/32'),
  named('reserved', '240.0.0.0/4'),
];

// IPv6 outside these is judged by the global-unicast rule (2000::/3) below, which already denies
// everything IANA has not allocated for unicast (100::/64 discard, 5f00::/16 SRv6, …).
const IPV6_DENIED: NamedRange[] = [
  named('unspecified', '::/128'),
  named('loopback', '::1/128'),
  named('reserved for local-use NAT64', '64:ff9b:1::/48'),
  named('unique-local', 'fc00::/7'),
  named('link-local', 'fe80::/10'),
  named('deprecated site-local', 'fec0::/10'),
  named('multicast', 'ff00::/8'),
  named('documentation', '2001:db8::/32'),
  named('documentation', '3fff::/20'),
  named('benchmarking', '2001:2::/48'),
];

// Judged after the embedding forms, because Teredo (2001::/32) lies inside it.
const IETF_V6 = named('reserved for IETF protocol assignments', '2001::/23');
const GLOBAL_UNICAST_V6: [Addr, number] = ipaddr.parseCIDR('2000::/3');

/**
 * IPv6 forms that carry an IPv4 address and may reach it: they are judged by that address, so a
 * mapped loopback is loopback. `prefixBits` is where the IPv4 address starts.
 */
interface EmbeddingForm {
  label: string;
  net: [Addr, number];
  prefixBits: number;
  extract: (v6: IPv6) => IPv4;
}

function v4FromWords(hi: number, lo: number): IPv4 {
  return new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
}

const lastWords = (v6: IPv6): IPv4 => v4FromWords(v6.parts[6]!, v6.parts[7]!);

// Order matters: ::/96 (IPv4-compatible) also contains :: and ::1, which IPV6_DENIED judges first.
const EMBEDDINGS: EmbeddingForm[] = [
  { label: 'IPv4-mapped', net: ipaddr.parseCIDR('::ffff:0:0/96'), prefixBits: 96, extract: lastWords },
  { label: 'IPv4-translated', net: ipaddr.parseCIDR('::ffff:0:0:0/96'), prefixBits: 96, extract: lastWords },
  { label: 'NAT64', net: ipaddr.parseCIDR('64:ff9b::/96'), prefixBits: 96, extract: lastWords },
  {
    label: '6to4',
    net: ipaddr.parseCIDR('2002::/16'),
    prefixBits: 16,
    extract: (v6) => v4FromWords(v6.parts[1]!, v6.parts[2]!),
  },
  {
    // Teredo (RFC 4380) stores the client's IPv4 address bit-inverted in the last 32 bits.
    label: 'Teredo',
    net: ipaddr.parseCIDR('2001::/32'),
    prefixBits: -1,
    extract: (v6) => v4FromWords(~v6.parts[6]! & 0xffff, ~v6.parts[7]! & 0xffff),
  },
  { label: 'IPv4-compatible', net: ipaddr.parseCIDR('::/96'), prefixBits: 96, extract: lastWords },
];

// Cloud metadata endpoints hand out credentials. They stay denied even inside an allowed range,
// unless the allow list names the address itself: AWS/GCP/Azure/OCI/DigitalOcean IMDS, the ECS
// task metadata endpoint, the EKS Pod Identity agent (IPv4 and IPv6), AWS IMDS over IPv6 and
// Alibaba Cloud's metadata service.
const METADATA = new Set(
  [
    '169.254.169.254',
    '169.254.170.2',
    '169.254.170.23',
    'fd00:ec2::254',
    'fd00:ec2::23',
    '100.100.100.200',
  ].map((a) => ipaddr.parse(a).toString()),
);

function isMapped(a: Addr): a is IPv6 {
  return a.kind() === 'ipv6' && (a as IPv6).isIPv4MappedAddress();
}

/** Canonical text without a zone id; a mapped address keeps its dotted IPv4 tail (RFC 5952 §5). */
function canonical(a: Addr): string {
  if (a.kind() === 'ipv4') return a.toString();
  const v6 = a as IPv6;
  if (v6.isIPv4MappedAddress()) return `::ffff:${v6.toIPv4Address().toString()}`;
  return new ipaddr.IPv6(v6.parts).toString();
}

function matches(a: Addr, net: [Addr, number]): boolean {
  return a.kind() === net[0].kind() && a.match(net);
}

function findRange(a: Addr, table: readonly NamedRange[]): NamedRange | undefined {
  return table.find((r) => matches(a, r.net));
}

/** The IPv6 CIDR that holds every address of `form` embedding an address of `v4cidr`. */
function embeddedCidr(form: EmbeddingForm, v4cidr: string): string {
  const [v4net, bits] = ipaddr.IPv4.parseCIDR(v4cidr);
  const bytes = form.net[0].toByteArray();
  const start = form.prefixBits / 8;
  v4net.toByteArray().forEach((b, i) => {
    bytes[start + i] = b;
  });
  return `${ipaddr.fromByteArray(bytes).toString()}/${form.prefixBits + bits}`;
}

/** Parses one allow entry strictly: no octal/short IPv4 forms, no zone ids, no host bits. */
function parseAllowEntry(entry: string): [Addr, number] {
  const text = entry.trim();
  const slash = text.indexOf('/');
  const addrText = slash === -1 ? text : text.slice(0, slash);
  const lenText = slash === -1 ? undefined : text.slice(slash + 1);
  let addr: Addr;
  if (ipaddr.IPv4.isValidFourPartDecimal(addrText)) {
    addr = ipaddr.IPv4.parse(addrText);
  } else if (ipaddr.IPv6.isValid(addrText) && !addrText.includes('%')) {
    addr = ipaddr.IPv6.parse(addrText);
  } else {
    throw new CidrError(entry, `"${addrText}" is not an IP address`);
  }
  const max = addr.kind() === 'ipv4' ? 32 : 128;
  if (lenText === undefined) return [addr, max];
  if (!/^\d{1,3}$/.test(lenText) || Number(lenText) > max) {
    throw new CidrError(entry, `the prefix length must be a whole number from 0 to ${max}`);
  }
  const bits = Number(lenText);
  const network =
    addr.kind() === 'ipv4'
      ? ipaddr.IPv4.networkAddressFromCIDR(`${addr.toString()}/${bits}`)
      : ipaddr.IPv6.networkAddressFromCIDR(`${addr.toString()}/${bits}`);
  if (network.toString() !== addr.toString()) {
    throw new CidrError(entry, `it has host bits set; did you mean ${canonical(network)}/${bits}?`);
  }
  return [addr, bits];
}

/** What the send-time and create-time checks need of a policy; lets a reload swap the policy. */
export interface AddressChecker {
  check(address: string): AddressVerdict;
}

/** Holds the policy in force; `set` swaps it atomically when the config is reloaded. */
export class SwitchablePolicy implements AddressChecker {
  constructor(private current: AddressPolicy) {}

  get policy(): AddressPolicy {
    return this.current;
  }

  set(policy: AddressPolicy): void {
    this.current = policy;
  }

  check(address: string): AddressVerdict {
    return this.current.check(address);
  }
}

/**
 * The callback target policy. By default only globally routable unicast addresses are allowed;
 * the operator opens ranges with `--allow-callback-net`.
 */
export class AddressPolicy implements AddressChecker {
  /** The allow entries, normalised to CIDR form (`10.1.2.3` → `10.1.2.3/32`). */
  readonly allowList: readonly string[];
  private readonly allowV4: [IPv4, number][] = [];
  private readonly allowV6: [IPv6, number][] = [];
  /** Canonical addresses the allow list names exactly (a /32 or /128); these open metadata. */
  private readonly exact = new Set<string>();

  /**
   * @param allow CIDRs or bare addresses from `--allow-callback-net`; throws `CidrError` naming
   * the first bad entry.
   */
  constructor(allow: readonly string[] = []) {
    const list: string[] = [];
    for (const entry of allow) {
      const [addr, bits] = parseAllowEntry(entry);
      list.push(`${canonical(addr)}/${bits}`);
      if (addr.kind() === 'ipv4') {
        this.allowV4.push([addr as IPv4, bits]);
        if (bits === 32) this.exact.add(canonical(addr));
      } else {
        const v6 = addr as IPv6;
        this.allowV6.push([v6, bits]);
        if (bits === 128) this.exact.add(canonical(v6));
        // An entry written as a mapped range (::ffff:10.0.0.0/104) means the IPv4 range too.
        if (bits >= 96 && v6.isIPv4MappedAddress()) {
          const v4 = v6.toIPv4Address();
          this.allowV4.push([v4, bits - 96]);
          if (bits === 128) this.exact.add(canonical(v4));
        }
      }
    }
    this.allowList = Object.freeze(list);
  }

  /** Judges one IP address (no host names; resolve those first). */
  check(address: string): AddressVerdict {
    let addr: Addr;
    try {
      addr = ipaddr.parse(address);
    } catch {
      return {
        allowed: false,
        address,
        range: 'not an IP address',
        reason: 'not an IP address',
        allowWith: '',
        metadata: false,
      };
    }
    const text = canonical(addr);
    const form = addr.kind() === 'ipv6' ? embeddingOf(addr as IPv6) : undefined;
    const inner = form ? form.extract(addr as IPv6) : undefined;

    const metadata = METADATA.has(text)
      ? text
      : inner && METADATA.has(inner.toString())
        ? inner.toString()
        : '';
    if (metadata) {
      const exactV4 = (addr.kind() === 'ipv4' || isMapped(addr)) && this.exact.has(metadata);
      if (this.exact.has(text) || exactV4) return { allowed: true };
      const allowWith =
        form && form.label !== 'IPv4-mapped'
          ? `${text}/128`
          : `${metadata}/${metadata.includes(':') ? 128 : 32}`;
      const cidr = `${metadata}/${metadata.includes(':') ? 128 : 32}`;
      const what = `a cloud metadata address (${cidr})`;
      return {
        allowed: false,
        address: text,
        range: `cloud metadata ${cidr}`,
        reason: form ? `the ${form.label} form of ${metadata}, which is ${what}` : what,
        allowWith,
        metadata: true,
      };
    }

    if (this.inAllowList(addr)) return { allowed: true };

    if (addr.kind() === 'ipv4') {
      const hit = findRange(addr, IPV4_DENIED);
      if (!hit) return { allowed: true };
      return denial(text, hit, `${hit.name} (${hit.cidr})`, hit.cidr);
    }

    const v6 = addr as IPv6;
    const hit = findRange(v6, IPV6_DENIED);
    if (hit) return denial(text, hit, `${hit.name} (${hit.cidr})`, hit.cidr);
    if (form && inner) {
      const innerHit = findRange(inner, IPV4_DENIED);
      if (!innerHit) return { allowed: true };
      const allowWith =
        form.label === 'IPv4-mapped'
          ? innerHit.cidr
          : form.prefixBits < 0
            ? `${text}/128`
            : embeddedCidr(form, innerHit.cidr);
      const reason = `the ${form.label} form of ${inner.toString()}, which is ${innerHit.name} (${innerHit.cidr})`;
      return denial(text, innerHit, reason, allowWith);
    }
    if (matches(v6, IETF_V6.net))
      return denial(text, IETF_V6, `${IETF_V6.name} (${IETF_V6.cidr})`, IETF_V6.cidr);
    if (!matches(v6, GLOBAL_UNICAST_V6)) {
      // Everything outside 2000::/3 that no rule above names is unallocated or special-purpose
      // (100::/64 discard-only, 5f00::/16 SRv6 SIDs, …); none of it is a public host.
      return {
        allowed: false,
        address: text,
        range: 'reserved (not in global unicast 2000::/3)',
        reason: 'reserved: outside global unicast 2000::/3',
        allowWith: `${text}/128`,
        metadata: false,
      };
    }
    return { allowed: true };
  }

  private inAllowList(addr: Addr): boolean {
    if (addr.kind() === 'ipv4') return this.allowV4.some((net) => addr.match(net));
    if (this.allowV6.some((net) => addr.match(net))) return true;
    // An allowed IPv4 range also allows the IPv4-mapped form of its addresses: Node connects to
    // ::ffff:a.b.c.d over IPv4, so it reaches exactly that IPv4 address.
    if (isMapped(addr)) {
      const v4 = addr.toIPv4Address();
      return this.allowV4.some((net) => v4.match(net));
    }
    return false;
  }
}

function embeddingOf(v6: IPv6): EmbeddingForm | undefined {
  return EMBEDDINGS.find((f) => v6.match(f.net));
}

function denial(address: string, hit: NamedRange, reason: string, allowWith: string): AddressDenial {
  return { allowed: false, address, range: `${hit.name} ${hit.cidr}`, reason, allowWith, metadata: false };
}

/**
 * The sentence that tells a user why an address is refused and how the operator can allow it:
 * `127.0.0.1, which is loopback (127.0.0.0/8); callbacks may only go to globally routable
 * addresses unless the operator allows the range with --allow-callback-net 127.0.0.0/8`.
 */
export function describeDenial(denial: AddressDenial): string {
  if (!denial.allowWith) return `${denial.address}, which is ${denial.reason}`;
  const how = denial.metadata
    ? `the operator names this exact address with --allow-callback-net ${denial.allowWith}`
    : `the operator allows the range with --allow-callback-net ${denial.allowWith}`;
  return (
    `${denial.address}, which is ${denial.reason}; ` +
    `callbacks may only go to globally routable addresses unless ${how}`
  );
}

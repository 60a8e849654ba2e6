import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AddressPolicy, CidrError, describeDenial } from '../../src/policy/address-policy.js';

const byDefault = new AddressPolicy();

/** [address, expected range, or null when allowed] */
const DEFAULT_TABLE: [string, string | null][] = [
  // Public IPv4
  ['8.8.8.8', null],
  ['1.1.1.1', null],
  ['93.184.215.14', null],
  ['100.63.255.255', null],
  ['100.128.0.0', null],
  ['172.15.255.255', null],
  ['172.32.0.0', null],
  ['192.169.0.1', null],
  ['198.17.255.255', null],
  ['198.20.0.0', null],
  ['223.255.255.255', null],
  ['192.175.48.1', null],
  // Denied IPv4
  ['0.0.0.0', 'unspecified 0.0.0.0/32'],
  ['0.1.2.3', 'reserved "this network" 0.0.0.0/8'],
  ['10.0.0.1', 'private 10.0.0.0/8'],
  ['10.255.255.255', 'private 10.0.0.0/8'],
  ['100.64.0.1', 'carrier-grade NAT 100.64.0.0/10'],
  ['100.127.255.254', 'carrier-grade NAT 100.64.0.0/10'],
  ['127.0.0.1', 'loopback 127.0.0.0/8'],
  ['127.255.255.254', 'loopback 127.0.0.0/8'],
  ['169.254.0.1', 'link-local 169.254.0.0/16'],
  ['172.16.0.1', 'private 172.16.0.0/12'],
  ['172.31.255.255', 'private 172.16.0.0/12'],
  ['192.0.0.8', 'reserved for IETF protocol assignments 192.0.0.0/24'],
  ['192.0.2.1', 'documentation 192.0.2.0/24'],
  ['192.88.99.1', 'deprecated 6to4 relay anycast 192.88.99.0/24'],
  ['192.168.1.1', 'private 192.168.0.0/16'],
  ['198.18.0.1', 'benchmarking 198.18.0.0/15'],
  ['198.19.255.255', 'benchmarking 198.18.0.0/15'],
  ['198.51.100.7', 'documentation 198.51.100.0/24'],
  ['203.0.113.7', 'documentation 203.0.113.0/24'],
  ['224.0.0.1', 'multicast 224.0.0.0/4'],
  ['239.255.255.250', 'multicast 224.0.0.0/4'],
  ['240.0.0.1', 'reserved 240.0.0.0/4'],
  ['255.255.255.255', 'broadcast 255.255.255.255/32'],
  // Cloud metadata
  ['169.254.169.254', 'cloud metadata 169.254.169.254/32'],
  ['169.254.170.2', 'cloud metadata 169.254.170.2/32'],
  ['100.100.100.200', 'cloud metadata 100.100.100.200/32'],
  ['fd00:ec2::254', 'cloud metadata fd00:ec2::254/128'],
  ['::ffff:169.254.169.254', 'cloud metadata 169.254.169.254/32'],
  // Public IPv6
  ['2606:4700::1111', null],
  ['2001:4860:4860::8888', null],
  ['2a00:1450:4001:80b::200e', null],
  ['2001:db9::1', null],
  // Denied IPv6
  ['::', 'unspecified ::/128'],
  ['::1', 'loopback ::1/128'],
  ['0:0:0:0:0:0:0:1', 'loopback ::1/128'],
  ['fe80::1', 'link-local fe80::/10'],
  ['fe80::1%eth0', 'link-local fe80::/10'],
  ['febf::1', 'link-local fe80::/10'],
  ['fec0::1', 'deprecated site-local fec0::/10'],
  ['fc00::1', 'unique-local fc00::/7'],
  ['fd12:3456:789a::1', 'unique-local fc00::/7'],
  ['ff02::1', 'multicast ff00::/8'],
  ['ff0e::101', 'multicast ff00::/8'],
  ['2001:db8::1', 'documentation 2001:db8::/32'],
  ['3fff::1', 'documentation 3fff::/20'],
  ['2001:2::1', 'benchmarking 2001:2::/48'],
  ['2001:10::1', 'reserved for IETF protocol assignments 2001::/23'],
  ['64:ff9b:1::a00:1', 'reserved for local-use NAT64 64:ff9b:1::/48'],
  ['100::1', 'reserved (not in global unicast 2000::/3)'],
  ['5f00::1', 'reserved (not in global unicast 2000::/3)'],
  ['4000::1', 'reserved (not in global unicast 2000::/3)'],
  // IPv6 forms judged by the IPv4 address they embed
  ['::ffff:127.0.0.1', 'loopback 127.0.0.0/8'],
  ['::ffff:7f00:1', 'loopback 127.0.0.0/8'],
  ['0:0:0:0:0:ffff:7f00:1', 'loopback 127.0.0.0/8'],
  ['::ffff:10.1.2.3', 'private 10.0.0.0/8'],
  ['::ffff:0.0.0.0', 'unspecified 0.0.0.0/32'],
  ['::ffff:8.8.8.8', null],
  ['::7f00:1', 'loopback 127.0.0.0/8'],
  ['::127.0.0.1', 'loopback 127.0.0.0/8'],
  ['::ffff:0:7f00:1', 'loopback 127.0.0.0/8'],
  ['64:ff9b::7f00:1', 'loopback 127.0.0.0/8'],
  ['64:ff9b::192.168.0.1', 'private 192.168.0.0/16'],
  ['64:ff9b::808:808', null],
  ['2002:7f00:1::', 'loopback 127.0.0.0/8'],
  ['2002:c0a8:101::1', 'private 192.168.0.0/16'],
  ['2002:a9fe:a9fe::', 'cloud metadata 169.254.169.254/32'],
  ['2002:808:808::1', null],
  // Teredo: client 127.0.0.1 is stored inverted as 80ff:fffe; 8.8.8.8 as f7f7:f7f7
  ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'loopback 127.0.0.0/8'],
  ['2001:0:4136:e378:8000:63bf:f5ff:fffe', 'private 10.0.0.0/8'],
  ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', null],
  // Not addresses at all
  ['localhost', 'not an IP address'],
  ['', 'not an IP address'],
];

describe('AddressPolicy defaults', () => {
  for (const [address, range] of DEFAULT_TABLE) {
    it(`${address || '(empty)'} → ${range ?? 'allowed'}`, () => {
      const verdict = byDefault.check(address);
      if (range === null) {
        assert.deepEqual(verdict, { allowed: true });
      } else {
        assert.equal(verdict.allowed, false);
        assert.equal(!verdict.allowed && verdict.range, range);
      }
    });
  }

  it('names the address, the range and the flag that opens it', () => {
    const verdict = byDefault.check('127.0.0.1');
    assert.ok(!verdict.allowed);
    assert.equal(verdict.address, '127.0.0.1');
    assert.equal(verdict.reason, 'loopback (127.0.0.0/8)');
    assert.equal(verdict.allowWith, '127.0.0.0/8');
    assert.equal(
      describeDenial(verdict),
      '127.0.0.1, which is loopback (127.0.0.0/8); callbacks may only go to globally routable addresses ' +
        'unless the operator allows the range with --allow-callback-net 127.0.0.0/8',
    );
  });

  it('explains an embedded form by the IPv4 address inside it', () => {
    const mapped = byDefault.check('::ffff:7f00:1');
    assert.ok(!mapped.allowed);
    assert.equal(mapped.address, '::ffff:127.0.0.1');
    assert.equal(mapped.reason, 'the IPv4-mapped form of 127.0.0.1, which is loopback (127.0.0.0/8)');
    assert.equal(mapped.allowWith, '127.0.0.0/8');

    const sixToFour = byDefault.check('2002:a00:1::');
    assert.ok(!sixToFour.allowed);
    assert.equal(sixToFour.reason, 'the 6to4 form of 10.0.0.1, which is private (10.0.0.0/8)');
    assert.equal(sixToFour.allowWith, '2002:a00::/24');

    const nat64 = byDefault.check('64:ff9b::a00:1');
    assert.ok(!nat64.allowed);
    assert.equal(nat64.allowWith, '64:ff9b::a00:0/104');
  });

  it('tells the operator to name a metadata address exactly', () => {
    const verdict = byDefault.check('169.254.169.254');
    assert.ok(!verdict.allowed);
    assert.equal(verdict.metadata, true);
    assert.equal(verdict.allowWith, '169.254.169.254/32');
    assert.match(
      describeDenial(verdict),
      /names this exact address with --allow-callback-net 169\.254\.169\.254\/32/,
    );
  });
});

describe('AddressPolicy allow list', () => {
  it('opens 127.0.0.0/8 and ::1/128, including the mapped form of an allowed IPv4 address', () => {
    const policy = new AddressPolicy(['127.0.0.0/8', '::1/128']);
    for (const a of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '8.8.8.8']) {
      assert.deepEqual(policy.check(a), { allowed: true }, a);
    }
    for (const a of ['10.0.0.1', '::2', 'fe80::1', '2002:7f00:1::', '64:ff9b::7f00:1']) {
      assert.equal(policy.check(a).allowed, false, a);
    }
  });

  it('a bare address allows exactly that address', () => {
    const policy = new AddressPolicy(['10.1.2.3', 'fd00::5']);
    assert.deepEqual(policy.allowList, ['10.1.2.3/32', 'fd00::5/128']);
    assert.equal(policy.check('10.1.2.3').allowed, true);
    assert.equal(policy.check('10.1.2.4').allowed, false);
    assert.equal(policy.check('fd00::5').allowed, true);
    assert.equal(policy.check('fd00::6').allowed, false);
  });

  it('an IPv4-mapped range also opens the IPv4 range', () => {
    const policy = new AddressPolicy(['::ffff:10.0.0.0/104']);
    assert.equal(policy.check('10.9.9.9').allowed, true);
    assert.equal(policy.check('::ffff:10.9.9.9').allowed, true);
    assert.equal(policy.check('11.0.0.1').allowed, true);
    assert.equal(policy.check('192.168.0.1').allowed, false);
  });

  it('a wide range does not open cloud metadata addresses', () => {
    for (const allow of [['169.254.0.0/16'], ['0.0.0.0/0'], ['0.0.0.0/0', '::/0'], ['100.64.0.0/10']]) {
      const policy = new AddressPolicy(allow);
      for (const a of ['169.254.169.254', '169.254.170.2', '::ffff:169.254.169.254', '100.100.100.200']) {
        const verdict = policy.check(a);
        assert.equal(verdict.allowed, false, `${a} with ${allow.join(' ')}`);
        assert.equal(!verdict.allowed && verdict.metadata, true);
      }
    }
    const everything = new AddressPolicy(['0.0.0.0/0', '::/0']);
    assert.equal(everything.check('169.254.1.1').allowed, true);
    assert.equal(everything.check('fd00:ec2::254').allowed, false);
    assert.equal(everything.check('fd00:ec2::255').allowed, true);
    assert.equal(everything.check('2002:a9fe:a9fe::').allowed, false);
  });

  it('a metadata address named exactly is opened, in plain and mapped form', () => {
    for (const entry of ['169.254.169.254', '169.254.169.254/32', '::ffff:169.254.169.254/128']) {
      const policy = new AddressPolicy([entry]);
      assert.equal(policy.check('169.254.169.254').allowed, true, entry);
      assert.equal(policy.check('::ffff:169.254.169.254').allowed, true, entry);
      assert.equal(policy.check('169.254.170.2').allowed, false, entry);
      assert.equal(policy.check('169.254.169.253').allowed, false, entry);
    }
    assert.equal(new AddressPolicy(['fd00:ec2::254']).check('fd00:ec2::254').allowed, true);
    assert.equal(new AddressPolicy(['100.100.100.200/32']).check('100.100.100.200').allowed, true);
  });

  it('normalises entries for display', () => {
    const policy = new AddressPolicy([' 10.0.0.0/8', '2001:0DB8::/32', '::FFFF:7F00:0/104']);
    assert.deepEqual(policy.allowList, ['10.0.0.0/8', '2001:db8::/32', '::ffff:127.0.0.0/104']);
  });

  const BAD: [string, RegExp][] = [
    ['10.0.0.1/8', /host bits set; did you mean 10\.0\.0\.0\/8\?/],
    ['fd00::1/8', /did you mean fd00::\/8\?/],
    ['not-an-ip', /"not-an-ip" is not an IP address/],
    ['10.0.0.0/33', /prefix length must be a whole number from 0 to 32/],
    ['::/129', /from 0 to 128/],
    ['10.0.0.0/', /prefix length/],
    ['10.0.0.0/-1', /prefix length/],
    ['10.0.0.0/8/8', /prefix length/],
    ['010.0.0.1', /not an IP address/],
    ['127.1', /not an IP address/],
    ['fe80::1%eth0', /not an IP address/],
    ['', /not an IP address/],
  ];
  for (const [entry, message] of BAD) {
    it(`rejects "${entry}" with a CidrError naming it`, () => {
      assert.throws(
        () => new AddressPolicy(['127.0.0.0/8', entry]),
        (err: unknown) =>
          err instanceof CidrError &&
          err.entry === entry &&
          err.message.includes(`"${entry}"`) &&
          message.test(err.message),
      );
    });
  }
});

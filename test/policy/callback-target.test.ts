import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AddressPolicy } from '../../src/policy/address-policy.js';
import { checkCallbackTarget, type LookupAll } from '../../src/policy/callback-target.js';

const byDefault = new AddressPolicy();

function fixedLookup(table: Record<string, string[]>): LookupAll & { calls: string[] } {
  const calls: string[] = [];
  const lookup = async (hostname: string) => {
    calls.push(hostname);
    const found = table[hostname];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return found;
  };
  return Object.assign(lookup, { calls });
}

const noLookup: LookupAll = async (hostname) => {
  throw new Error(`an IP literal must not be resolved, got ${hostname}`);
};

describe('checkCallbackTarget with IP literals', () => {
  const CASES: [string, boolean][] = [
    ['http://127.0.0.1:8080/hook', false],
    ['http://10.0.0.5/hook', false],
    ['https://169.254.169.254/latest/meta-data/', false],
    ['http://0x7f.1/', false], // the URL parser turns this into 127.0.0.1
    ['http://2130706433/', false],
    ['http://[::1]:9000/', false],
    ['http://[::ffff:127.0.0.1]/', false],
    ['http://[fd00::1]/', false],
    ['http://8.8.8.8/hook', true],
    ['https://[2606:4700::1111]/hook', true],
  ];
  for (const [url, ok] of CASES) {
    it(`${url} → ${ok ? 'ok' : 'refused'}`, async () => {
      const result = await checkCallbackTarget(new URL(url), byDefault, { lookup: noLookup });
      assert.equal(result.ok, ok, JSON.stringify(result));
    });
  }

  it('names the address, the rule and the flag', async () => {
    const result = await checkCallbackTarget(new URL('http://[::1]:9000/'), byDefault, { lookup: noLookup });
    const message =
      'goes to ::1, which is loopback (::1/128); callbacks may only go to globally routable ' +
      'addresses unless the operator allows the range with --allow-callback-net ::1/128';
    // An IP literal is the client's own text: naming it tells nothing, so both say it.
    assert.deepEqual(result, { ok: false, message, detail: message });
  });

  it('returns the literal as the checked address', async () => {
    const result = await checkCallbackTarget(new URL('https://[2606:4700::1111]/x'), byDefault, {
      lookup: noLookup,
    });
    assert.deepEqual(result, { ok: true, addresses: ['2606:4700::1111'] });
  });

  it('accepts a literal the operator allowed', async () => {
    const policy = new AddressPolicy(['127.0.0.0/8']);
    const result = await checkCallbackTarget(new URL('http://127.0.0.1:8080/'), policy, { lookup: noLookup });
    assert.deepEqual(result, { ok: true, addresses: ['127.0.0.1'] });
  });

  it('refuses a scheme other than http and https', async () => {
    const result = await checkCallbackTarget(new URL('ftp://8.8.8.8/'), byDefault, { lookup: noLookup });
    assert.equal(result.ok, false);
  });
});

describe('checkCallbackTarget with host names', () => {
  it('refuses localhost with the system resolver', async () => {
    const result = await checkCallbackTarget(new URL('http://localhost:3000/hook'), byDefault);
    assert.equal(result.ok, false);
    assert.equal(
      !result.ok ? result.message : '',
      'host localhost resolves to an address the callback policy refuses: callbacks may only go to globally routable addresses unless the operator allows the range with --allow-callback-net',
      'no DNS oracle: the message names the rule, not the address',
    );
    assert.match(
      !result.ok ? result.detail : '',
      /^host localhost resolves to (127\.0\.0\.1, which is loopback \(127\.0\.0\.0\/8\)|::1, which is loopback \(::1\/128\)); callbacks may only go to globally routable addresses unless the operator allows the range with --allow-callback-net (127\.0\.0\.0\/8|::1\/128)$/,
    );
  });

  it('refuses a name when any of its addresses is denied', async () => {
    const lookup = fixedLookup({ 'hooks.example.com': ['93.184.215.14', '2606:4700::1111', '10.1.2.3'] });
    const result = await checkCallbackTarget(new URL('https://hooks.example.com/in'), byDefault, { lookup });
    assert.deepEqual(result, {
      ok: false,
      message:
        'host hooks.example.com resolves to an address the callback policy refuses: callbacks may only go ' +
        'to globally routable addresses unless the operator allows the range with --allow-callback-net',
      detail:
        'host hooks.example.com resolves to 10.1.2.3, which is private (10.0.0.0/8); callbacks may ' +
        'only go to globally routable addresses unless the operator allows the range with ' +
        '--allow-callback-net 10.0.0.0/8',
    });
    assert.deepEqual(lookup.calls, ['hooks.example.com']);
  });

  it('refuses a name that resolves to a mapped loopback address', async () => {
    const lookup = fixedLookup({ 'sneaky.example.com': ['::ffff:7f00:1'] });
    const result = await checkCallbackTarget(new URL('http://sneaky.example.com/'), byDefault, { lookup });
    assert.equal(result.ok, false);
    assert.match(
      !result.ok ? result.detail : '',
      /::ffff:127\.0\.0\.1, which is the IPv4-mapped form of 127\.0\.0\.1/,
    );
  });

  it('accepts a name whose addresses are all allowed, and returns them', async () => {
    const lookup = fixedLookup({
      'hooks.example.com': ['93.184.215.14', '2606:4700::1111', '93.184.215.14'],
    });
    const result = await checkCallbackTarget(new URL('https://hooks.example.com/in'), byDefault, { lookup });
    assert.deepEqual(result, { ok: true, addresses: ['93.184.215.14', '2606:4700::1111'] });
  });

  it('accepts mixed addresses once the operator allows the private one', async () => {
    const lookup = fixedLookup({ 'svc.internal': ['10.1.2.3', '8.8.8.8'] });
    const result = await checkCallbackTarget(
      new URL('http://svc.internal/'),
      new AddressPolicy(['10.0.0.0/8']),
      {
        lookup,
      },
    );
    assert.deepEqual(result, { ok: true, addresses: ['10.1.2.3', '8.8.8.8'] });
  });

  it('names the exact-address flag for a metadata address', async () => {
    const lookup = fixedLookup({ 'metadata.google.internal': ['169.254.169.254'] });
    const result = await checkCallbackTarget(
      new URL('http://metadata.google.internal/computeMetadata/v1/'),
      new AddressPolicy(['169.254.0.0/16']),
      { lookup },
    );
    assert.equal(result.ok, false);
    assert.match(
      !result.ok ? result.detail : '',
      /resolves to 169\.254\.169\.254, which is a cloud metadata address .* names this exact address with --allow-callback-net 169\.254\.169\.254\/32$/,
    );
  });

  it('accepts a name that does not resolve now, with no addresses', async () => {
    for (const code of ['ENOTFOUND', 'EAI_AGAIN']) {
      const lookup: LookupAll = async (hostname) => {
        throw Object.assign(new Error(`getaddrinfo ${code} ${hostname}`), { code });
      };
      const result = await checkCallbackTarget(new URL('https://hooks.example.com/'), byDefault, { lookup });
      assert.deepEqual(result, { ok: true, addresses: [] }, code);
    }
  });

  it('accepts a name whose lookup outlasts the timeout, with no addresses', async () => {
    // The lookup only answers after the check has given up, so it settles on the timeout alone.
    let answer: (addresses: string[]) => void = () => {};
    const lookup: LookupAll = () =>
      new Promise((resolve) => {
        answer = resolve;
      });
    const result = await checkCallbackTarget(new URL('https://slow.example.com/'), byDefault, {
      lookup,
      timeoutMs: 20,
    });
    answer(['127.0.0.1']);
    assert.deepEqual(result, { ok: true, addresses: [] });
  });

  it('treats a trailing-dot name like any other name', async () => {
    const lookup = fixedLookup({ 'hooks.example.com.': ['127.0.0.1'] });
    const result = await checkCallbackTarget(new URL('https://hooks.example.com./'), byDefault, { lookup });
    assert.equal(result.ok, false);
  });
});

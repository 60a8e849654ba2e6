import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_REDACTED_QUERY_PARAMS, queryRedactor } from '../../src/privacy/redact-query.js';

describe('queryRedactor', () => {
  const redact = queryRedactor(DEFAULT_REDACTED_QUERY_PARAMS)!;
  const cases: [string, string][] = [
    [
      'http://h/repositories/alice-private/timeseries/salary?api_key=ALICE-SECRET',
      'http://h/repositories/alice-private/timeseries/salary?api_key=REDACTED',
    ],
    ['http://h/x?a=1&token=t&b=2', 'http://h/x?a=1&token=REDACTED&b=2'],
    ['http://h/x?API_KEY=s&Sig=1', 'http://h/x?API_KEY=REDACTED&Sig=REDACTED'],
    ['http://h/x?api%5Fkey=s', 'http://h/x?api%5Fkey=REDACTED'],
    ['http://h/x?key', 'http://h/x?key=REDACTED'],
    ['http://h/x?key=a=b&keys=1', 'http://h/x?key=REDACTED&keys=1'],
    ['http://h/x?monkey=1&keyring=2', 'http://h/x?monkey=1&keyring=2'],
    ['http://h/x?password=p#frag', 'http://h/x?password=REDACTED#frag'],
    ['http://h/x', 'http://h/x'],
    ['http://h/x?', 'http://h/x?'],
    ['http://h/x?%zz=1&secret=%E0', 'http://h/x?%zz=1&secret=REDACTED'],
    ['http://h/x?token=1&token=2', 'http://h/x?token=REDACTED&token=REDACTED'],
  ];
  for (const [input, expected] of cases) it(input, () => assert.equal(redact(input), expected));

  it('an empty list disables redaction', () => {
    assert.equal(queryRedactor([]), undefined);
  });
  it('a configured list replaces the default', () => {
    const r = queryRedactor(['session'])!;
    assert.equal(r('http://h/?session=1&api_key=2'), 'http://h/?session=REDACTED&api_key=2');
  });
});

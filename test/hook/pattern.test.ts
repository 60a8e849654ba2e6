import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type CompiledPattern,
  compilePattern,
  decodeRequestSegment,
  MAX_PATTERN_LENGTH,
  MAX_PATTERN_SEGMENTS,
  type PatternSegment,
  splitRequestPath,
} from '../../src/hook/pattern.js';

const compiled = (source: string): CompiledPattern => {
  const r = compilePattern(source);
  if (!r.ok) assert.fail(`expected ${JSON.stringify(source)} to compile, got: ${r.message}`);
  return r.pattern;
};

const rejection = (source: string): string => {
  const r = compilePattern(source);
  if (r.ok) assert.fail(`expected ${JSON.stringify(source)} to be rejected`);
  return r.message;
};

const lit = (value: string): PatternSegment => ({ kind: 'literal', value });
const star: PatternSegment = { kind: 'wildcard', capture: false };
const cap: PatternSegment = { kind: 'wildcard', capture: true };

describe('compilePattern: accepted patterns', () => {
  const table: [string, PatternSegment[], boolean][] = [
    ['/', [], false],
    ['/$', [], true],
    ['$', [], true],
    ['a', [lit('a')], false],
    ['/a', [lit('a')], false],
    ['/a/', [lit('a')], false],
    ['a/', [lit('a')], false],
    ['/repositories/*/timeseries/(*)', [lit('repositories'), star, lit('timeseries'), cap], false],
    ['/repositories/*/timeseries/(*)/$', [lit('repositories'), star, lit('timeseries'), cap], true],
    ['/repositories/*/timeseries/(*)/$/', [lit('repositories'), star, lit('timeseries'), cap], true],
    ['*', [star], false],
    ['(*)/(*)', [cap, cap], false],
    ['/a%20b', [lit('a b')], false],
    ['/a b', [lit('a b')], false],
    ['/%2A/%28%2A%29/%24', [lit('*'), lit('(*)'), lit('$')], false],
    ['/a%2Fb', [lit('a/b')], false],
    ['/caf%C3%A9/café', [lit('café'), lit('café')], false],
    ['/..', [lit('..')], false],
    ['/v1.0/users@x/~me', [lit('v1.0'), lit('users@x'), lit('~me')], false],
  ];
  for (const [source, segments, anchored] of table) {
    it(`accepts ${JSON.stringify(source)}`, () => {
      const p = compiled(source);
      assert.equal(p.source, source);
      assert.deepEqual(p.segments, segments);
      assert.equal(p.anchored, anchored);
      assert.equal(p.captureCount, segments.filter((s) => s.kind === 'wildcard' && s.capture).length);
    });
  }

  it('accepts the limits exactly', () => {
    const maxSegments = '/a'.repeat(MAX_PATTERN_SEGMENTS);
    assert.equal(compiled(maxSegments).segments.length, MAX_PATTERN_SEGMENTS);
    assert.equal(compiled(`${maxSegments}/$`).segments.length, MAX_PATTERN_SEGMENTS);
    const maxLength = `/${'a'.repeat(MAX_PATTERN_LENGTH - 1)}`;
    assert.equal(compiled(maxLength).segments.length, 1);
  });

  it('numbers captures in order of appearance', () => {
    assert.equal(compiled('/a/(*)/*/(*)/b/(*)').captureCount, 3);
  });
});

describe('compilePattern: rejected patterns', () => {
  // Each message must name the offending part and the rule broken.
  const table: [string, RegExp][] = [
    ['', /^must not be empty; use `\/` to match every path$/],
    ['//', /segment 1 is empty/],
    ['a//b', /segment 2 is empty \(`\/\/`\): empty segments are not allowed/],
    ['/a//b/', /segment 2 is empty/],
    ['/repositories/*/ts-*', /^segment 3 `ts-\*`: a wildcard must be a whole segment \(`\*` or `\(\*\)`\)$/],
    ['/a/**', /^segment 2 `\*\*`: a wildcard must be a whole segment/],
    ['/a/(*', /^segment 2 `\(\*`: a wildcard must be a whole segment/],
    ['/a/*)', /^segment 2 `\*\)`: a wildcard must be a whole segment/],
    ['/a/(**)', /^segment 2 `\(\*\*\)`: a wildcard must be a whole segment/],
    ['/(ts)', /^segment 1 `\(ts\)`: only `\(\*\)` may be parenthesised/],
    ['/a/(', /^segment 2 `\(`: only `\(\*\)` may be parenthesised/],
    ['/$/a', /^segment 1 `\$`: `\$` anchors the end and must be the last segment$/],
    ['/a/$/$', /^segment 2 `\$`: `\$` anchors the end/],
    ['/a$', /^segment 1 `a\$`: `\$` must be a segment of its own/],
    ['/a/%zz', /^segment 2 `%zz`: invalid percent-encoding/],
    ['/a/%2', /^segment 2 `%2`: invalid percent-encoding/],
    ['/%FF', /^segment 1 `%FF`: invalid percent-encoding/],
    ['/a?b=1', /contains `\?` at position 3: the query string never takes part in matching/],
    ['/a#top', /contains `#` at position 3: a fragment/],
    ['/a\u0000b', /contains a control character \(U\+0000\) at position 3/],
    ['/a\nb', /control character \(U\+000A\)/],
    ['/a\tb', /control character \(U\+0009\)/],
    ['/a\u007fb', /control character \(U\+007F\)/],
    ['/a\u0085b', /control character \(U\+0085\)/],
    ['/a'.repeat(MAX_PATTERN_SEGMENTS + 1), /^has 65 segments; at most 64 are allowed$/],
    [`/${'a'.repeat(MAX_PATTERN_LENGTH)}`, /^is 2049 characters long; at most 2048 are allowed$/],
  ];
  for (const [source, message] of table) {
    it(`rejects ${JSON.stringify(source.length > 40 ? `${source.slice(0, 40)}…` : source)}`, () => {
      assert.match(rejection(source), message);
    });
  }

  it('rejects a non-string from untyped input', () => {
    assert.equal(rejection(42 as unknown as string), 'must be a string');
  });
});

describe('splitRequestPath', () => {
  const table: [string, string[]][] = [
    ['', []],
    ['/', []],
    ['?a=b', []],
    ['/?a=/b/c', []],
    ['/a', ['a']],
    ['a', ['a']],
    ['/a/', ['a']],
    ['/a/b?x=/c', ['a', 'b']],
    ['/a/b#frag/c', ['a', 'b']],
    ['/a/b/?x', ['a', 'b']],
    ['//', ['']],
    ['/a//b', ['a', '', 'b']],
    ['/a//', ['a', '']],
    ['/a%20b/%22q%22/back%5Cslash', ['a b', '"q"', 'back\\slash']],
    ['/a%2Fb/c', ['a/b', 'c']],
    ['/%zz/ok%2', ['%zz', 'ok%2']],
    ['/%FF', ['%FF']],
    ['/a+b', ['a+b']],
  ];
  for (const [path, segments] of table) {
    it(`splits ${JSON.stringify(path)}`, () => {
      assert.deepEqual(splitRequestPath(path), segments);
    });
  }
});

describe('decodeRequestSegment', () => {
  it('decodes valid escapes and keeps invalid ones raw', () => {
    assert.equal(decodeRequestSegment('plain'), 'plain');
    assert.equal(decodeRequestSegment('a%2Fb'), 'a/b');
    assert.equal(decodeRequestSegment('%E2%9C%93'), '✓');
    assert.equal(decodeRequestSegment('100%'), '100%');
    assert.equal(decodeRequestSegment('%E2%9C'), '%E2%9C');
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { MatchIndex } from '../../src/engine/match-index.js';
import { type CompiledPattern, compilePattern, splitRequestPath } from '../../src/hook/pattern.js';

const compiled = (source: string): CompiledPattern => {
  const r = compilePattern(source);
  if (!r.ok) assert.fail(`${source}: ${r.message}`);
  return r.pattern;
};

/** An index whose values are the keys, built from `key → pattern` pairs in order. */
const indexOf = (pairs: Record<string, string>): MatchIndex<string> => {
  const index = new MatchIndex<string>();
  for (const [key, source] of Object.entries(pairs)) index.set(key, compiled(source), key);
  return index;
};

/** `[key, captures]` for each match, in the order the index returns them. */
const hits = (index: MatchIndex<string>, path: string): [string, string[]][] =>
  index.match(path).map((m) => [m.value, m.captures]);

/** Captures of the single pattern `source` against `path`, or null when it does not match. */
const one = (source: string, path: string): string[] | null => {
  const found = indexOf({ p: source }).match(path);
  assert.ok(found.length <= 1);
  return found[0]?.captures ?? null;
};

describe('MatchIndex: the spec examples', () => {
  const prefix = '/repositories/*/timeseries/(*)';
  const anchored = '/repositories/*/timeseries/(*)/$';

  it('a prefix pattern fires for a time series, its data and its attributes', () => {
    assert.deepEqual(one(prefix, '/repositories/r1/timeseries/ts1'), ['ts1']);
    assert.deepEqual(one(prefix, '/repositories/r1/timeseries/ts1/data'), ['ts1']);
    assert.deepEqual(one(prefix, '/repositories/r1/timeseries/ts1/attributes/unit'), ['ts1']);
    assert.deepEqual(one(prefix, '/repositories/r1/timeseries/ts1/'), ['ts1']);
    assert.deepEqual(one(prefix, '/repositories/r1/timeseries/ts1?from=2020/01'), ['ts1']);
  });

  it('a prefix pattern needs all of its segments', () => {
    assert.equal(one(prefix, '/repositories/r1/timeseries'), null);
    assert.equal(one(prefix, '/repositories/r1/timeseries/'), null);
    assert.equal(one(prefix, '/repositories/r1/timeseries?x=/ts1'), null);
    assert.equal(one(prefix, '/repositories/r1/other/ts1'), null);
    assert.equal(one(prefix, '/Repositories/r1/timeseries/ts1'), null);
  });

  it('`$` anchors the end', () => {
    assert.deepEqual(one(anchored, '/repositories/r1/timeseries/ts1'), ['ts1']);
    assert.deepEqual(one(anchored, '/repositories/r1/timeseries/ts1/'), ['ts1']);
    assert.deepEqual(one(anchored, '/repositories/r1/timeseries/ts1?a=b/c'), ['ts1']);
    assert.equal(one(anchored, '/repositories/r1/timeseries/ts1/data'), null);
    assert.equal(one(anchored, '/repositories/r1/timeseries/ts1//'), null);
    assert.equal(one(anchored, '/repositories/r1/timeseries'), null);
  });

  it('two capture groups are numbered in order', () => {
    assert.deepEqual(one('/repositories/(*)/attributes/(*)', '/repositories/r9/attributes/unit/x'), [
      'r9',
      'unit',
    ]);
  });
});

describe('MatchIndex: segments', () => {
  it('`/` matches every path and `/$` only the root', () => {
    for (const path of ['', '/', '/?q=1', '/a', '/a/b/c', '//', 'a']) assert.deepEqual(one('/', path), []);
    for (const path of ['', '/', '/?q=1', '#x']) assert.deepEqual(one('/$', path), []);
    for (const path of ['/a', '//', '/a/']) assert.equal(one('/$', path), null);
  });

  it('a leading slash is optional on both sides', () => {
    assert.deepEqual(one('a/(*)', '/a/b'), ['b']);
    assert.deepEqual(one('/a/(*)', 'a/b'), ['b']);
  });

  it('`*` needs exactly one non-empty segment', () => {
    assert.equal(one('/a/*', '/a'), null);
    assert.equal(one('/a/*', '/a/'), null);
    assert.equal(one('/a/*/b', '/a//b'), null);
    assert.equal(one('/a/(*)/$', '/a/b/c'), null);
    assert.deepEqual(one('/a/(*)/$', '/a/b'), ['b']);
    assert.equal(one('/(*)', '//'), null);
  });

  it('compares literals case-sensitively, after percent-decoding both sides', () => {
    assert.deepEqual(one('/a b', '/a%20b'), []);
    assert.deepEqual(one('/a%20b', '/a b'), []);
    assert.deepEqual(one('/a%20b', '/a%20b'), []);
    assert.deepEqual(one('/%2A', '/*'), []);
    assert.deepEqual(one('/caf%C3%A9', '/café'), []);
    assert.equal(one('/a', '/A'), null);
    assert.equal(one('/a%2Fb', '/a/b'), null);
    assert.deepEqual(one('/a%2Fb', '/a%2fb'), []);
  });

  it('captures the percent-decoded segment, and `%2F` stays inside its segment', () => {
    assert.deepEqual(one('/q/(*)', '/q/%22quoted%22'), ['"quoted"']);
    assert.deepEqual(one('/q/(*)', '/q/back%5Cslash'), ['back\\slash']);
    assert.deepEqual(one('/q/(*)/end/$', '/q/x%2Fy/end'), ['x/y']);
    assert.equal(one('/q/(*)/end/$', '/q/x/y/end'), null);
    assert.deepEqual(one('/q/(*)', '/q/%E2%9C%93'), ['✓']);
  });

  it('keeps an invalid percent-encoding raw', () => {
    assert.deepEqual(one('/q/(*)', '/q/%zz'), ['%zz']);
    assert.deepEqual(one('/q/(*)', '/q/%FF'), ['%FF']);
    assert.deepEqual(one('/q/(*)', '/q/100%'), ['100%']);
  });

  it('ignores the query string and the fragment', () => {
    assert.equal(one('/a/b', '/a?/b'), null);
    assert.equal(one('/a/b', '/a#/b'), null);
    assert.deepEqual(one('/a/(*)', '/a/b#c?d'), ['b']);
  });
});

describe('MatchIndex: maintenance', () => {
  it('returns every matching entry in insertion order of keys', () => {
    const index = indexOf({
      all: '/',
      exactA: '/a/$',
      a: '/a',
      ab: '/a/b',
      starB: '/*/b',
      twoCaps: '/(*)/(*)',
      other: '/c',
    });
    assert.deepEqual(hits(index, '/a/b/c'), [
      ['all', []],
      ['a', []],
      ['ab', []],
      ['starB', []],
      ['twoCaps', ['a', 'b']],
    ]);
    assert.deepEqual(hits(index, '/a'), [
      ['all', []],
      ['exactA', []],
      ['a', []],
    ]);
    assert.deepEqual(hits(index, '/x/y'), [
      ['all', []],
      ['twoCaps', ['x', 'y']],
    ]);
  });

  it('replaces by key, keeping the key in its place', () => {
    const index = indexOf({ k1: '/a', k2: '/a', k3: '/a' });
    index.set('k1', compiled('/a/(*)'), 'k1');
    index.set('k2', compiled('/a'), 'k2-v2');
    assert.equal(index.size, 3);
    assert.deepEqual(
      index.match('/a/x').map((m) => [m.value, m.captures]),
      [
        ['k1', ['x']],
        ['k2-v2', []],
        ['k3', []],
      ],
    );
    assert.deepEqual(hits(index, '/a'), [
      ['k2-v2', []],
      ['k3', []],
    ]);
  });

  it('replaces a pattern with its own prefix without losing the node', () => {
    const index = indexOf({ k: '/a/b/c' });
    index.set('k', compiled('/a'), 'k');
    assert.deepEqual(hits(index, '/a'), [['k', []]]);
    index.set('k', compiled('/a/b/c/d'), 'k');
    assert.deepEqual(hits(index, '/a/b/c/d'), [['k', []]]);
    assert.deepEqual(hits(index, '/a'), []);
    index.set('k', compiled('/a/b/c/d/$'), 'k');
    assert.deepEqual(hits(index, '/a/b/c/d/e'), []);
    assert.deepEqual(hits(index, '/a/b/c/d'), [['k', []]]);
  });

  it('deletes by key, moves a re-added key to the end, and clears', () => {
    const index = indexOf({ k1: '/a', k2: '/*', k3: '/(*)/$' });
    assert.equal(index.delete('k1'), true);
    assert.equal(index.delete('k1'), false);
    assert.equal(index.delete('nope'), false);
    assert.equal(index.size, 2);
    assert.deepEqual(hits(index, '/a'), [
      ['k2', []],
      ['k3', ['a']],
    ]);
    index.set('k1', compiled('/a'), 'k1');
    assert.deepEqual(
      hits(index, '/a').map(([k]) => k),
      ['k2', 'k3', 'k1'],
    );
    index.clear();
    assert.equal(index.size, 0);
    assert.equal(index.nodeCount, 1);
    assert.deepEqual(hits(index, '/a'), []);
  });

  it('prunes empty nodes on delete and replace', () => {
    const index = new MatchIndex<string>();
    const sources = ['/a/b/c', '/a/b/d', '/a/*/c', '/(*)/b/$', '/x/y/z/w', '/', '/$'];
    sources.forEach((s, i) => {
      index.set(`k${i}`, compiled(s), s);
    });
    const full = index.nodeCount;
    assert.equal(full, 13);
    index.set('k4', compiled('/x'), '/x');
    assert.equal(index.nodeCount, full - 3);
    index.delete('k0');
    assert.equal(index.nodeCount, full - 4);
    for (let i = 0; i < sources.length; i++) index.delete(`k${i}`);
    assert.equal(index.size, 0);
    assert.equal(index.nodeCount, 1);
    assert.deepEqual(index.match('/a/b/c'), []);
  });

  it('holds many hooks on the same pattern', () => {
    const index = new MatchIndex<number>();
    const pattern = compiled('/repositories/(*)/timeseries/(*)');
    for (let i = 0; i < 2000; i++) index.set(`h${i}`, pattern, i);
    let found = index.match('/repositories/r1/timeseries/t1/data');
    assert.equal(found.length, 2000);
    assert.deepEqual(
      found.map((m) => m.value),
      Array.from({ length: 2000 }, (_, i) => i),
    );
    assert.ok(found.every((m) => m.captures[0] === 'r1' && m.captures[1] === 't1'));
    for (let i = 0; i < 2000; i += 2) index.delete(`h${i}`);
    found = index.match('/repositories/r1/timeseries/t1');
    assert.deepEqual(
      found.map((m) => m.value),
      Array.from({ length: 1000 }, (_, i) => 2 * i + 1),
    );
    for (let i = 1; i < 2000; i += 2) index.delete(`h${i}`);
    assert.equal(index.nodeCount, 1);
  });

  it('keeps order and captures while a node goes from one entry to several and back', () => {
    const index = new MatchIndex<string>();
    const open = compiled('/a/(*)');
    const anchored = compiled('/a/(*)/$');
    index.set('k1', open, 'k1');
    index.set('k2', anchored, 'k2');
    index.set('k3', open, 'k3');
    index.set('k4', open, 'k4');
    assert.deepEqual(hits(index, '/a/x'), [
      ['k1', ['x']],
      ['k2', ['x']],
      ['k3', ['x']],
      ['k4', ['x']],
    ]);
    index.delete('k1');
    index.delete('k4');
    assert.deepEqual(hits(index, '/a/x/y'), [['k3', ['x']]]);
    index.delete('k3');
    assert.deepEqual(hits(index, '/a/x/y'), []);
    assert.deepEqual(hits(index, '/a/x'), [['k2', ['x']]]);
    index.set('k1', open, 'k1');
    index.set('k5', anchored, 'k5');
    assert.deepEqual(hits(index, '/a/x'), [
      ['k2', ['x']],
      ['k1', ['x']],
      ['k5', ['x']],
    ]);
    index.set('k2', compiled('/a/(*)/(*)'), 'k2');
    assert.deepEqual(hits(index, '/a/x/y'), [
      ['k2', ['x', 'y']],
      ['k1', ['x']],
    ]);
  });

  it('captures by depth past the thirtieth segment', () => {
    const deep = `/${Array.from({ length: 31 }, () => '*').join('/')}/(*)/(*)`;
    const path = `/${Array.from({ length: 33 }, (_, i) => `s${i}`).join('/')}`;
    const index = indexOf({ deep, shallow: '/(*)' });
    assert.deepEqual(hits(index, path), [
      ['deep', ['s31', 's32']],
      ['shallow', ['s0']],
    ]);
  });

  it('does not share capture arrays between matches or calls', () => {
    const index = indexOf({ k1: '/(*)', k2: '/(*)' });
    const [m1, m2] = index.match('/a');
    m1!.captures.push('mutated');
    assert.deepEqual(m2!.captures, ['a']);
    assert.deepEqual(index.match('/b')[0]!.captures, ['b']);
  });
});

// The property tests compare the index with a brute-force matcher that reads the pattern's raw
// tokens itself (not the compiler's output), so that they check compilePattern too.
const PATTERN_LITERALS = ['a', 'b', 'c', '%61', 'a%20b', 'a b', 'a%2Fb', '%2A'];
const PATH_SEGMENTS = [
  'a',
  'b',
  'c',
  'x',
  '',
  '%61',
  '%62',
  'a%20b',
  'a b',
  'a%2fb',
  '%2F',
  '%2a',
  '*',
  '%zz',
  '%',
];

interface PatternSpec {
  tokens: string[];
  anchored: boolean;
  source: string;
}

const patternArb: fc.Arbitrary<PatternSpec> = fc
  .record({
    leading: fc.boolean(),
    tokens: fc.array(fc.constantFrom(...PATTERN_LITERALS, '*', '*', '(*)', '(*)'), { maxLength: 5 }),
    anchored: fc.boolean(),
    trailing: fc.boolean(),
  })
  .map(({ leading, tokens, anchored, trailing }) => {
    const parts = anchored ? [...tokens, '$'] : tokens;
    const source = parts.length === 0 ? '/' : (leading ? '/' : '') + parts.join('/') + (trailing ? '/' : '');
    return { tokens, anchored, source };
  });

const pathArb: fc.Arbitrary<string> = fc
  .record({
    leading: fc.boolean(),
    segments: fc.array(fc.constantFrom(...PATH_SEGMENTS), { maxLength: 7 }),
    trailing: fc.boolean(),
    suffix: fc.constantFrom('', '', '', '?q=/a/b', '?', '#a/b'),
  })
  .map(
    ({ leading, segments, trailing, suffix }) =>
      (leading ? '/' : '') + segments.join('/') + (trailing ? '/' : '') + suffix,
  );

const referenceMatch = (spec: PatternSpec, path: string): string[] | null => {
  const segments = splitRequestPath(path);
  if (segments.length < spec.tokens.length) return null;
  if (spec.anchored && segments.length !== spec.tokens.length) return null;
  const captures: string[] = [];
  for (let i = 0; i < spec.tokens.length; i++) {
    const token = spec.tokens[i]!;
    const segment = segments[i]!;
    if (token === '*' || token === '(*)') {
      if (segment === '') return null;
      if (token === '(*)') captures.push(segment);
    } else if (decodeURIComponent(token) !== segment) {
      return null;
    }
  }
  return captures;
};

const expected = (model: Map<string, PatternSpec>, path: string): [string, string[]][] => {
  const out: [string, string[]][] = [];
  for (const [key, spec] of model) {
    const captures = referenceMatch(spec, path);
    if (captures !== null) out.push([key, captures]);
  }
  return out;
};

describe('MatchIndex: agrees with a brute-force matcher', () => {
  it('on random patterns and paths', () => {
    fc.assert(
      fc.property(
        fc.array(patternArb, { minLength: 1, maxLength: 60 }),
        fc.array(pathArb, { minLength: 1, maxLength: 25 }),
        (specs, paths) => {
          const index = new MatchIndex<string>();
          const model = new Map<string, PatternSpec>();
          specs.forEach((spec, i) => {
            index.set(`k${i}`, compiled(spec.source), `k${i}`);
            model.set(`k${i}`, spec);
          });
          for (const path of paths) assert.deepEqual(hits(index, path), expected(model, path), path);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('through random sets, replaces and deletes', () => {
    const keyArb = fc.constantFrom('k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7');
    const opArb = fc.oneof(
      { weight: 3, arbitrary: fc.record({ op: fc.constant('set' as const), key: keyArb, spec: patternArb }) },
      { weight: 1, arbitrary: fc.record({ op: fc.constant('delete' as const), key: keyArb }) },
      { weight: 1, arbitrary: fc.record({ op: fc.constant('match' as const), path: pathArb }) },
    );
    fc.assert(
      fc.property(
        fc.array(opArb, { maxLength: 60 }),
        fc.array(pathArb, { minLength: 1, maxLength: 10 }),
        (ops, paths) => {
          const index = new MatchIndex<string>();
          const model = new Map<string, PatternSpec>();
          for (const op of ops) {
            if (op.op === 'set') {
              index.set(op.key, compiled(op.spec.source), op.key);
              model.set(op.key, op.spec);
            } else if (op.op === 'delete') {
              assert.equal(index.delete(op.key), model.delete(op.key));
            } else {
              assert.deepEqual(hits(index, op.path), expected(model, op.path), op.path);
            }
            assert.equal(index.size, model.size);
          }
          for (const path of paths) assert.deepEqual(hits(index, path), expected(model, path), path);
          for (const key of [...model.keys()]) index.delete(key);
          assert.equal(index.nodeCount, 1);
        },
      ),
      { numRuns: 300 },
    );
  });
});

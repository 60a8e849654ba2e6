import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { type CompiledPattern, compilePattern, splitRequestPath } from '../../src/hook/pattern.js';
import {
  compileScopes,
  covers,
  parseScopes,
  pathInScopes,
  patternAllowed,
  requestInScopes,
} from '../../src/users/scopes.js';

const p = (source: string): CompiledPattern => {
  const r = compilePattern(source);
  if (!r.ok) assert.fail(`${source}: ${r.message}`);
  return r.pattern;
};

describe('covers: pattern ⊆ scope', () => {
  const cases: [scope: string, pattern: string, expected: boolean][] = [
    ['/', '/', true],
    ['/', '/$', true],
    ['/', '/a/*/b/$', true],
    ['/a', '/a', true],
    ['/a', '/a/b', true],
    ['/a', '/a/(*)/c', true],
    ['/a', '/', false],
    ['/a', '/*', false],
    ['/a', '/b', false],
    ['/a/b', '/a', false],
    ['/a/b', '/a/*', false],
    ['/a/*', '/a/b', true],
    ['/a/*', '/a/(*)/c/$', true],
    ['/a/(*)', '/a/*', true],
    ['/*', '/a', true],
    ['/*', '/', false],
    ['/*', '/$', false],
    ['/$', '/$', true],
    ['/$', '/', false],
    ['/a/$', '/a/$', true],
    ['/a/$', '/a', false],
    ['/a/$', '/a/b/$', false],
    ['/*/$', '/a/$', true],
    ['/*/$', '/*/$', true],
    ['/a/$', '/*/$', false],
    ['/a%20b', '/a b/c', true],
    ['/a/', '/a/b', true],
    ['a', '/a/b', true],
    ['/repositories/acme', '/repositories/acme-evil', false],
    ['/repositories/acme', '/repositories/*/timeseries', false],
  ];
  for (const [scope, pattern, expected] of cases) {
    it(`${scope} ${expected ? 'covers' : 'does not cover'} ${pattern}`, () => {
      assert.equal(covers(p(scope), p(pattern)), expected);
    });
  }
});

// Brute force: every path over a small alphabet (the literals used, an empty segment and one
// fresh segment) up to one segment longer than either pattern. Two patterns over these literals
// differ on some path of that set if they differ at all, so "covers" must equal "every path the
// pattern matches, the scope matches".
const LITERALS = ['a', 'b'];
const token = fc.constantFrom('a', 'b', '*', '(*)');
const patternText = fc
  .record({ tokens: fc.array(token, { maxLength: 3 }), anchored: fc.boolean() })
  .map(({ tokens, anchored }) => `/${[...tokens, ...(anchored ? ['$'] : [])].join('/')}`);

function allPaths(maxSegments: number): string[] {
  const alphabet = [...LITERALS, 'zz', ''];
  let level: string[][] = [[]];
  const out: string[][] = [[]];
  for (let n = 1; n <= maxSegments; n++) {
    level = level.flatMap((segs) => alphabet.map((s) => [...segs, s]));
    out.push(...level);
  }
  // A trailing empty segment would be dropped as a trailing slash: keep paths as the index sees them.
  return out.map((segs) => `/${segs.join('/')}`);
}
const PATHS = allPaths(4);

const matches = (pattern: CompiledPattern, path: string) =>
  pathInScopes(compileScopes([pattern.source]), path);

describe('covers agrees with brute force', () => {
  it('on every pair of small patterns', () => {
    fc.assert(
      fc.property(patternText, patternText, (scopeText, patternText) => {
        const scope = p(scopeText);
        const pattern = p(patternText);
        const brute = PATHS.every((path) => !matches(pattern, path) || matches(scope, path));
        assert.equal(covers(scope, pattern), brute, `${scopeText} ⊇ ${patternText}`);
      }),
      { numRuns: 2000 },
    );
  });

  it('is reflexive and transitive', () => {
    fc.assert(
      fc.property(patternText, patternText, patternText, (a, b, c) => {
        assert.ok(covers(p(a), p(a)));
        if (covers(p(a), p(b)) && covers(p(b), p(c))) assert.ok(covers(p(a), p(c)));
      }),
    );
  });
});

describe('pathInScopes', () => {
  const scopes = compileScopes(['/repositories/acme', '/users/*/settings/$', 'own']);
  for (const [path, inside] of [
    ['/repositories/acme', true],
    ['/repositories/acme/', true],
    ['/repositories/acme/timeseries/x?api_key=1', true],
    ['/repositories/acme-evil', false],
    ['/repositories/ac%6De/x', true],
    ['/repositories', false],
    ['/users/bob/settings', true],
    ['/users/bob/settings/more', false],
    ['/users//settings', false],
    ['/', false],
  ] as const) {
    it(`${path}: ${inside ? 'inside' : 'outside'}`, () => assert.equal(pathInScopes(scopes, path), inside));
  }
  it('"/" holds every path', () => {
    const all = compileScopes(['/']);
    assert.ok(all.everything);
    for (const path of ['/', '/x', '//', '/a/b/c?d']) assert.ok(pathInScopes(all, path));
  });
  it('"own" alone holds no path, only the owner\'s own requests', () => {
    const own = compileScopes(['own']);
    assert.equal(pathInScopes(own, '/x'), false);
    assert.equal(requestInScopes(own, '/x', 'bob', 'bob'), true);
    assert.equal(requestInScopes(own, '/x', 'bob', 'alice'), false);
    assert.equal(requestInScopes(own, '/x', 'bob', undefined), false);
  });
  it('no scopes: nothing', () => {
    assert.equal(requestInScopes(compileScopes([]), '/', 'bob', 'bob'), false);
  });
  it('agrees with the segments the match index uses', () => {
    assert.deepEqual(splitRequestPath('/a/b/'), ['a', 'b']);
    assert.ok(pathInScopes(compileScopes(['/a/b/$']), '/a/b/'));
  });
});

describe('patternAllowed', () => {
  it('needs a covering path scope, or own', () => {
    assert.equal(patternAllowed(compileScopes(['/a']), p('/a/b')), true);
    assert.equal(patternAllowed(compileScopes(['/a']), p('/')), false);
    assert.equal(patternAllowed(compileScopes(['/a', '/b']), p('/b/*')), true);
    assert.equal(patternAllowed(compileScopes(['own']), p('/')), true);
    assert.equal(patternAllowed(compileScopes([]), p('/a')), false);
  });
});

describe('parseScopes', () => {
  it('accepts patterns and own, drops duplicates', () => {
    assert.deepEqual(parseScopes(['own', '/a', '/a', '/b/*/$']), {
      ok: true,
      scopes: ['own', '/a', '/b/*/$'],
    });
    assert.deepEqual(parseScopes([]), { ok: true, scopes: [] });
  });
  it('names each bad entry', () => {
    const r = parseScopes(['/a?b', 3, 'Own', '/a/$/b']);
    assert.equal(r.ok, false);
    if (r.ok) return;
    assert.equal(r.errors.length, 4);
    assert.match(r.errors[0]!, /^\[0\] "\/a\?b".*`\?`/);
    assert.match(r.errors[1]!, /^\[1\] must be a string/);
    assert.match(r.errors[2]!, /^\[2\] "Own" is neither/);
    assert.match(r.errors[3]!, /^\[3\] /);
  });
  it('refuses what is not a list', () => {
    assert.equal(parseScopes('own').ok, false);
    assert.equal(parseScopes(undefined).ok, false);
    assert.equal(parseScopes(Array(65).fill('own')).ok, false);
  });
});

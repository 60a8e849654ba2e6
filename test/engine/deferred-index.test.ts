import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import fc from 'fast-check';
import { DeferredIndex } from '../../src/engine/deferred-index.js';
import { MatchIndex } from '../../src/engine/match-index.js';
import { type CompiledPattern, compilePattern } from '../../src/hook/pattern.js';

interface Item {
  key: string;
  pattern: string;
}

const compiled = (source: string): CompiledPattern => {
  const r = compilePattern(source);
  if (!r.ok) assert.fail(`${source}: ${r.message}`);
  return r.pattern;
};

/** A deferred index of items, and the patterns it has compiled so far, in order. */
function deferred(): { index: DeferredIndex<Item>; compiledSoFar: string[] } {
  const compiledSoFar: string[] = [];
  const index = new DeferredIndex<Item>(
    (item) => {
      compiledSoFar.push(item.pattern);
      return compiled(item.pattern);
    },
    (item) => item.pattern,
  );
  return { index, compiledSoFar };
}

const keysOf = (index: { match(path: string): { value: Item; captures: string[] }[] }, path: string) =>
  index.match(path).map((m) => [m.value.key, m.captures]);

/** Waits until the background completion has compiled everything (it runs a slice per turn). */
async function completed(index: DeferredIndex<Item>, compiledSoFar: string[], total: number): Promise<void> {
  while (compiledSoFar.length < total && index.size > 0) await nextTurn();
}

describe('DeferredIndex', () => {
  it('compiles only the buckets a path can reach, and keeps the order of loading', () => {
    const { index, compiledSoFar } = deferred();
    index.load('a', { key: 'a', pattern: '/svc/(*)' });
    index.load('b', { key: 'b', pattern: '/other/(*)' });
    index.load('c', { key: 'c', pattern: '/*/x' });
    index.load('d', { key: 'd', pattern: '/svc/(*)/y' });
    assert.equal(index.size, 4);
    assert.equal(index.get('b')?.pattern, '/other/(*)');
    assert.deepEqual(compiledSoFar, []);
    assert.deepEqual(keysOf(index, '/svc/x/y'), [
      ['a', ['x']],
      ['c', []],
      ['d', ['x']],
    ]);
    // The wildcard bucket and the `svc` one; `other` waits.
    assert.deepEqual(compiledSoFar.sort(), ['/*/x', '/svc/(*)', '/svc/(*)/y']);
    assert.deepEqual(keysOf(index, '/svc/x'), [
      ['a', ['x']],
      ['c', []],
    ]);
  });

  it('a hook replaced or deleted before its bucket is compiled is never compiled', () => {
    const { index, compiledSoFar } = deferred();
    index.load('a', { key: 'a', pattern: '/svc/(*)' });
    index.load('b', { key: 'b', pattern: '/svc/*/(*)' });
    index.load('c', { key: 'c', pattern: '/svc' });
    index.set('a', compiled('/svc/$'), { key: 'a', pattern: '/svc/$' });
    assert.ok(index.delete('b'));
    assert.equal(index.delete('b'), false);
    assert.equal(index.size, 2);
    assert.deepEqual([...index.keys()].sort(), ['a', 'c']);
    // `a` keeps its place before `c`: a replace keeps the key's place, as Map#set does.
    assert.deepEqual(keysOf(index, '/svc'), [
      ['a', []],
      ['c', []],
    ]);
    assert.deepEqual(compiledSoFar, ['/svc']);
    assert.deepEqual(keysOf(index, '/svc/x/y'), [['c', []]]);
  });

  it('a key loaded twice keeps its first place and its last value', () => {
    const { index } = deferred();
    index.load('a', { key: 'a', pattern: '/x/(*)' });
    index.load('b', { key: 'b', pattern: '/x' });
    index.load('a', { key: 'a', pattern: '/x/*/(*)' });
    assert.equal(index.size, 2);
    assert.deepEqual(keysOf(index, '/x/1/2'), [
      ['a', ['2']],
      ['b', []],
    ]);
  });

  it('compiles what no request asked for in the background, then matches as before', async () => {
    const { index, compiledSoFar } = deferred();
    const n = 5000;
    for (let i = 0; i < n; i++) index.load(`k${i}`, { key: `k${i}`, pattern: `/s${i % 7}/(*)/t${i}` });
    assert.deepEqual(compiledSoFar, []);
    await completed(index, compiledSoFar, n);
    assert.equal(compiledSoFar.length, n);
    assert.equal(index.size, n);
    assert.deepEqual(keysOf(index, '/s3/v/t10'), [['k10', ['v']]]);
    index.clear();
    assert.equal(index.size, 0);
    assert.deepEqual(keysOf(index, '/s3/v/t10'), []);
  });

  it('answers exactly as a MatchIndex built by set, for any patterns and paths', () => {
    const segment = fc.constantFrom('a', 'b', 'c%20d', 'c d', '*', '(*)', '%2A');
    const pattern = fc
      .tuple(fc.array(segment, { maxLength: 4 }), fc.boolean(), fc.boolean())
      .map(([segs, slash, anchored]) => {
        const body = [...segs, ...(anchored ? ['$'] : [])].join('/');
        return slash || body === '' ? `/${body}` : body;
      });
    const path = fc
      .array(fc.constantFrom('a', 'b', 'c%20d', 'c d', '*', 'x', ''), { maxLength: 5 })
      .map((segs) => `/${segs.join('/')}`);
    fc.assert(
      fc.property(
        fc.array(pattern, { maxLength: 12 }),
        fc.array(path, { maxLength: 6 }),
        (patterns, paths) => {
          const { index } = deferred();
          const plain = new MatchIndex<Item>();
          patterns.forEach((p, i) => {
            const item = { key: `k${i}`, pattern: p };
            index.load(item.key, item);
            plain.set(item.key, compiled(p), item);
          });
          for (const p of paths) assert.deepEqual(keysOf(index, p), keysOf(plain, p), `path ${p}`);
          index.clear();
        },
      ),
    );
  });

  it('leaves out a stored entry whose pattern does not compile, tells of it, and matches the rest', async () => {
    const told: string[] = [];
    const index = new DeferredIndex<Item>(
      (item) => {
        const r = compilePattern(item.pattern);
        if (!r.ok) throw new Error(r.message);
        return r.pattern;
      },
      (item) => item.pattern,
      (item, err) => told.push(`${item.key}: ${err.message}`),
    );
    index.load('bad', { key: 'bad', pattern: '/svc/(((' });
    index.load('good', { key: 'good', pattern: '/svc/(*)' });
    index.load('later', { key: 'later', pattern: '/later/(*)' });
    assert.deepEqual(keysOf(index, '/svc/x'), [['good', ['x']]]);
    assert.equal(told.length, 1);
    assert.match(told[0]!, /^bad: /);
    // The background completion does not throw for it either, and finishes the rest.
    while (index.get('later') !== undefined && keysOf(index, '/later/y').length === 0) await nextTurn();
    assert.deepEqual(keysOf(index, '/later/y'), [['later', ['y']]]);
  });
});

import assert from 'node:assert/strict';
import { createSecretKey, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { LoopGuard, LoopMarker, MARK_WINDOW_S, passes } from '../../src/loops/index.js';

const key = () => createSecretKey(randomBytes(32));

describe('LoopMarker', () => {
  const m = new LoopMarker(key());
  const now = Date.now();

  it('a mark verifies for exactly its method and request-target, with its kind', () => {
    assert.equal(m.verify(m.mark('callback', 'POST', '/a?b=1', now), 'POST', '/a?b=1', now), 'callback');
    assert.equal(m.verify(m.mark('notification', 'POST', '/n', now), 'post', '/n', now), 'notification');
  });

  it('another request-target, method or key: not a mark', () => {
    const v = m.mark('callback', 'POST', '/a', now);
    assert.equal(m.verify(v, 'POST', '/b', now), undefined);
    assert.equal(m.verify(v, 'PUT', '/a', now), undefined);
    assert.equal(new LoopMarker(key()).verify(v, 'POST', '/a', now), undefined);
  });

  it('outside the window: not a mark', () => {
    const v = m.mark('callback', 'GET', '/a', now);
    assert.equal(m.verify(v, 'GET', '/a', now + (MARK_WINDOW_S + 2) * 1000), undefined);
    assert.equal(m.verify(v, 'GET', '/a', now - (MARK_WINDOW_S + 2) * 1000), undefined);
  });

  it('forged or malformed: not a mark', () => {
    const [v, k, t] = m.mark('callback', 'GET', '/a', now).split('.');
    for (const forged of [
      `${v}.${k}.${t}.${'A'.repeat(43)}`,
      `${v}.n.${t}.${m.mark('callback', 'GET', '/a', now).split('.')[3]}`,
      'v1.c.x.y',
      'v2.c.1.abc',
      '',
      'garbage',
    ]) {
      assert.equal(m.verify(forged, 'GET', '/a', now), undefined, forged);
    }
  });
});

describe('CDN-Loop passes', () => {
  it('counts hookd entries in any case, with parameters, across joined field lines', () => {
    assert.equal(passes('hookd'), 1);
    assert.equal(passes('other, HOOKD; x=1, hookd ,cdn'), 2);
    assert.equal(passes('hookdx, xhookd'), 0);
  });
});

describe('LoopGuard', () => {
  const marker = new LoopMarker(key());
  const cut: string[] = [];
  const g = new LoopGuard(marker, (k) => cut.push(k));

  it('marks a pipeline header list once, at its end (the attempt places stay put), and re-marks in place', () => {
    const h = [
      'traceparent',
      't',
      'x',
      '1',
      'webhook-id',
      'id',
      'webhook-timestamp',
      '',
      'webhook-signature',
      '',
    ];
    g.mark(h, 'callback', 'POST', '/p');
    assert.deepEqual(h.slice(0, 10), [
      'traceparent',
      't',
      'x',
      '1',
      'webhook-id',
      'id',
      'webhook-timestamp',
      '',
      'webhook-signature',
      '',
    ]);
    assert.deepEqual(h.slice(10, 13), ['cdn-loop', 'hookd', 'hookd-loop']);
    const first = h[13];
    g.mark(h, 'callback', 'POST', '/p');
    assert.equal(h.length, 14, 'the second attempt adds nothing');
    assert.equal(marker.verify(h[13]!, 'POST', '/p'), 'callback');
    assert.ok(first);
  });

  it('inspect: a clean request, an own one, one gone round too often', () => {
    assert.deepEqual(g.inspect('GET', '/x', ['Host', 'h']), {
      own: undefined,
      refuse: false,
      trail: undefined,
    });
    const v = marker.mark('notification', 'POST', '/n');
    assert.equal(g.inspect('POST', '/n', ['Hookd-Loop', v, 'CDN-Loop', 'hookd']).own, 'notification');
    assert.equal(g.inspect('POST', '/other', ['Hookd-Loop', v]).own, undefined);
    const r = g.inspect('GET', '/x', ['CDN-Loop', 'hookd, hookd', 'cdn-loop', 'hookd, hookd']);
    assert.equal(r.refuse, true);
    assert.deepEqual(cut, ['notification', 'hops']);
  });
});

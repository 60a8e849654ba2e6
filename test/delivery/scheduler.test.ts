import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DueHeap, type Schedulable, Scheduler } from '../../src/delivery/scheduler.js';

interface Item extends Schedulable {
  name: string;
}

const item = (name: string, at: number): Item => ({ name, nextAttempt: at });

describe('DueHeap', () => {
  it('pops in due order, with removal from anywhere', () => {
    const heap = new DueHeap<Item>();
    const items: Item[] = [];
    let seed = 7;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed;
    };
    for (let i = 0; i < 500; i++) {
      const it = item(`i${i}`, rnd() % 1000);
      items.push(it);
      heap.push(it);
    }
    const removed = new Set<Item>();
    for (let i = 0; i < items.length; i += 3) {
      assert.ok(heap.remove(items[i]!));
      removed.add(items[i]!);
    }
    assert.ok(!heap.remove(items[0]!), 'removing twice is a no-op');
    const out: number[] = [];
    for (let top = heap.pop(); top; top = heap.pop()) {
      assert.ok(!removed.has(top));
      assert.equal(heap.has(top), false);
      out.push(top.nextAttempt!);
    }
    assert.equal(out.length, items.length - removed.size);
    assert.deepEqual(
      out,
      [...out].sort((a, b) => a - b),
    );
  });
});

describe('Scheduler', () => {
  it('hands items over when due, earliest first, and not while stopped', async () => {
    const seen: string[] = [];
    let done!: () => void;
    const finished = new Promise<void>((r) => {
      done = r;
    });
    const s = new Scheduler<Item>();
    const onDue = (it: Item) => {
      seen.push(it.name);
      if (seen.length === 3) done();
    };
    const now = Date.now();
    s.add(item('late', now + 60));
    s.add(item('early', now + 20));
    s.add(item('now', now - 5));
    assert.equal(s.size, 3);
    // The marker: a running scheduler, given an item due just after the last of these, made after
    // them. Node runs timers in the order they expire (ties in the order made), so a timer the
    // stopped one had armed for its items would have fired before the marker's.
    await new Promise<void>((resolve) => {
      const marker = new Scheduler<Item>();
      marker.start(() => {
        marker.stop();
        resolve();
      });
      marker.add(item('marker', now + 61));
    });
    assert.deepEqual(seen, [], 'nothing fires before start');
    s.start(onDue);
    await finished;
    assert.deepEqual(seen, ['now', 'early', 'late']);
    assert.equal(s.size, 0);
    s.stop();
  });

  it('re-arms for an earlier item and forgets removed ones', async () => {
    const seen: string[] = [];
    const s = new Scheduler<Item>();
    s.start((it) => seen.push(it.name));
    const far = item('far', Date.now() + 3_600_000);
    s.add(far);
    const gone = item('gone', Date.now() + 10);
    s.add(gone);
    s.remove(gone);
    const soon = item('soon', Date.now() + 10);
    s.add(soon);
    while (seen.length === 0) await new Promise((r) => setTimeout(r, 5));
    assert.deepEqual(seen, ['soon']);
    assert.equal(s.size, 1);
    s.stop();
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DELIVERY_ID_SHAPE, newDeliveryId } from '../../src/delivery/delivery-id.js';

describe('delivery ids', () => {
  it('have the documented shape and sort in the order they were made, within a millisecond too', () => {
    const now = Date.now();
    const ids = Array.from({ length: 2000 }, (_, i) => newDeliveryId(now + Math.floor(i / 500)));
    for (const id of ids) assert.match(id, DELIVERY_ID_SHAPE);
    assert.deepEqual([...ids].sort(), ids);
    assert.equal(new Set(ids).size, ids.length);
  });

  it('sort by time across milliseconds', () => {
    const a = newDeliveryId(Date.parse('2026-01-01T00:00:00.001Z'));
    const b = newDeliveryId(Date.parse('2026-01-01T00:00:00.002Z'));
    const c = newDeliveryId(Date.parse('2027-01-01T00:00:00.000Z'));
    assert.ok(a < b && b < c);
  });
});

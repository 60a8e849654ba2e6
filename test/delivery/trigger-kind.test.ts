import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { firedMessage, triggerMessage } from '../../src/delivery/delivery-events.js';
import { triggerText } from '../../src/hookctl/notation.js';

// A notification's delivery is told apart from a hook's by its source (a notification endpoint,
// `ne_…`), not by its recorded method: NOTIFY is a method a real request can have.
describe("a delivery's trigger", () => {
  const recorded = { method: 'NOTIFY', path: '/repositories/r1' };

  it('is a request, with its method, path, status and user, for a hook', () => {
    assert.deepEqual(
      triggerMessage('hk_01JD7W6R0V1X2Y3Z4A5B6C7D8E', { ...recorded, statusCode: 204, user: 'al' }),
      {
        Kind: 'request',
        Method: 'NOTIFY',
        Path: '/repositories/r1',
        StatusCode: 204,
        User: 'al',
      },
    );
  });

  it('is a notification with its event and no method for a notification endpoint', () => {
    const t = triggerMessage('ne_01JD7W6R0V1X2Y3Z4A5B6C7D8E', { method: 'NOTIFY', path: 'hook.disabled' });
    assert.deepEqual(t, { Kind: 'notification', Event: 'hook.disabled' });
    const fired = firedMessage(
      {
        id: 'dl_1',
        hookId: 'ne_01JD7W6R0V1X2Y3Z4A5B6C7D8E',
        attempts: 0,
        request: { method: 'POST', url: 'https://ops.example/n' },
        trigger: { method: 'NOTIFY', path: 'delivery.failed' },
      },
      '2026-12-02T05:00:00.000Z',
    );
    assert.deepEqual(fired.Trigger, { Kind: 'notification', Event: 'delivery.failed' });
  });

  it('prints as hookctl shows it: the request with its status, or the notification and its event', () => {
    assert.equal(
      triggerText({ Kind: 'request', Method: 'GET', Path: '/x', StatusCode: 404 }),
      'GET /x [404]',
    );
    assert.equal(triggerText({ Kind: 'notification', Event: 'hook.disabled' }), 'notification hook.disabled');
    // An older hookd's answer has no Kind: a request.
    assert.equal(triggerText({ Method: 'GET', Path: '/x', StatusCode: null }), 'GET /x [-]');
  });
});

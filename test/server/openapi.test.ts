import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { registeredResources } from '../../src/server/route-table.js';
import { api, startHookd, type TestDaemon } from '../helpers/hookd.js';

describe('the served OpenAPI document', () => {
  let d: TestDaemon;
  before(async () => {
    d = await startHookd();
  });
  after(async () => d.close());

  it('describes every resource hookd serves, with each of its methods', async () => {
    const r = await api<{ openapi: string; paths: Record<string, Record<string, unknown>> }>(
      d.url,
      undefined,
      'GET',
      '/_hookd/openapi.json',
    );
    assert.equal(r.status, 200);
    assert.equal(r.body.openapi, '3.1.0');
    const resources = registeredResources(d.hookd.app.fastify);
    // /metrics, /healthz and /readyz are on the operations listener (not Fastify routes) since issue 14.
    assert.ok(resources.length >= 12, `only ${resources.length} resources registered`);
    for (const { url, allow } of resources) {
      const path = url.replace(/:([A-Za-z]+)/g, '{$1}');
      const doc = r.body.paths[path];
      assert.ok(doc, `${path} is served but not in openapi.json`);
      for (const method of allow.split(', ').filter((m) => m !== 'HEAD')) {
        assert.ok(doc[method.toLowerCase()], `${method} ${path} is served but not described`);
      }
    }
  });
});

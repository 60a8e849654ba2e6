import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { Authenticator } from '../../src/auth/authenticator.js';
import { type ApiFeature, registeredResources, resource } from '../../src/http-api/index.js';
import { buildApp } from '../../src/server/app.js';
import { MemoryStore } from '../../src/store/memory/memory-store.js';
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
    // /metrics, /healthz and /readyz are on the operations listener (not Fastify routes).
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

  it('serves every path it describes: nothing in the document is missing from the server', async () => {
    const r = await api<{ paths: Record<string, Record<string, unknown>> }>(
      d.url,
      undefined,
      'GET',
      '/_hookd/openapi.json',
    );
    const served = new Map(
      registeredResources(d.hookd.app.fastify).map(({ url, allow }) => [
        url.replace(/:([A-Za-z]+)/g, '{$1}'),
        allow.split(', '),
      ]),
    );
    for (const [path, item] of Object.entries(r.body.paths)) {
      const allow = served.get(path);
      assert.ok(allow, `${path} is in openapi.json but not served`);
      for (const method of Object.keys(item).filter((k) => k !== 'parameters')) {
        assert.ok(allow.includes(method.toUpperCase()), `${method} ${path} is described but not served`);
      }
    }
    assert.equal(Object.keys(r.body.paths).length, served.size);
  });
});

describe('a feature is held to its OpenAPI fragment', () => {
  const build = (feature: ApiFeature) =>
    buildApp({
      config: { apiBase: '/', bodyLimit: 1 << 20 },
      auth: new Authenticator(new MemoryStore()),
      logger: pino({ level: 'silent' }),
      system: { draining: () => false, storeReady: async () => true },
      eventsEnabled: () => true,
      features: [feature],
    });
  const ok = async () => undefined;

  it('refuses to start with a served path the fragment leaves out', async () => {
    await assert.rejects(
      build({
        name: 'stray',
        register: (a) => resource(a, '/_hookd/stray', { GET: ok }),
        openApi: { paths: {} },
      }),
      /stray serves \/_hookd\/stray but its OpenAPI fragment does not describe it/,
    );
  });

  it('refuses a served method the path item leaves out', async () => {
    await assert.rejects(
      build({
        name: 'half',
        register: (a) => resource(a, '/_hookd/half', { GET: ok, POST: ok }),
        openApi: { paths: { '/_hookd/half': { get: {} } } },
      }),
      /half serves POST \/_hookd\/half but does not describe that method/,
    );
  });

  it('refuses a described path nothing serves', async () => {
    await assert.rejects(
      build({
        name: 'ghost',
        register: () => undefined,
        openApi: { paths: { '/_hookd/ghost': { get: {} } } },
      }),
      /ghost describes \/_hookd\/ghost but does not serve it/,
    );
  });

  it('starts when the fragment matches, and serves the fragment in the document', async () => {
    const app = await build({
      name: 'fine',
      register: (a) => resource(a, '/_hookd/fine', { GET: ok }, { public: true }),
      openApi: { paths: { '/_hookd/fine': { get: { summary: 'fine' } } } },
    });
    const doc = (await app.fastify.inject({ url: '/_hookd/openapi.json' })).json() as {
      paths: Record<string, unknown>;
    };
    assert.deepEqual(Object.keys(doc.paths).sort(), ['/_hookd/fine', '/_hookd/openapi.json']);
    await app.fastify.close();
  });
});

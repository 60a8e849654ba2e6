import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { MockAgent } from 'undici';
import { clientTypesOf } from '../../scripts/openapi-client-types.js';
import { openApiDocument } from '../../scripts/openapi-document.js';
import { HookdClient } from '../../src/client/index.js';
import { REPO_ROOT, startHookd, type TestDaemon } from '../helpers/hookd.js';

// The OpenAPI document a running hookd serves is the one hookd/client's types are generated from,
// describes every route the client calls with its schemas and errors, and passes a real OpenAPI
// 3.1 linter (Redocly's recommended rules) with no error.

type Doc = { paths: Record<string, Record<string, Record<string, unknown>>> } & Record<string, unknown>;
let d: TestDaemon;
let served: Doc;

before(async () => {
  d = await startHookd();
  served = (await (await fetch(`${d.url}/_hookd/openapi.json`)).json()) as Doc;
});
after(async () => {
  await d.close();
});

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

describe('the served OpenAPI document and hookd/client', () => {
  it('the generated types are those of the served document', async () => {
    const committed = readFileSync(join(REPO_ROOT, 'src', 'client', 'openapi-types.ts'), 'utf8');
    assert.equal(
      await clientTypesOf(served),
      committed,
      'src/client/openapi-types.ts is not what the served document generates: run npm run build',
    );
  });

  it('a document that differs generates other types (the check above can fail)', async () => {
    const changed = structuredClone(served) as Doc & {
      components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
    };
    changed.components.schemas.Delivery!.properties!.Extra = { type: 'string' };
    const committed = readFileSync(join(REPO_ROOT, 'src', 'client', 'openapi-types.ts'), 'utf8');
    assert.notEqual(await clientTypesOf(changed), committed);
  });

  it('the build describes what a daemon serves, and ships it as schema/openapi.json', () => {
    const shipped = JSON.parse(readFileSync(join(REPO_ROOT, 'schema', 'openapi.json'), 'utf8')) as Doc;
    // Through JSON, as a daemon serves it (undefined members drop out).
    const { servers: _a, ...built } = JSON.parse(JSON.stringify(openApiDocument())) as Doc;
    const { servers: _b, ...live } = served;
    assert.deepEqual(built, live);
    const { servers: _c, ...file } = shipped;
    assert.deepEqual(file, live);
  });

  it('passes Redocly recommended rules with no error', async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({
      source: JSON.stringify(served),
      absoluteRef: '/openapi.json',
      config,
    });
    const errors = problems.filter((p) => p.severity === 'error');
    assert.deepEqual(
      errors.map((p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`),
      [],
    );
    // The warnings left are the WebSocket endpoints (101, not 2xx), the public document itself
    // (no 4xx) and the tail's frame schema, which no HTTP answer carries.
    const warnings = problems
      .filter((p) => p.severity === 'warn')
      .map((p) => `${p.ruleId} ${p.location[0]?.pointer}`)
      .sort();
    assert.deepEqual(warnings, [
      'no-unused-components #/components/schemas/TailEvent',
      'operation-2xx-response #/paths/~1_hookd~1listen/get/responses',
      'operation-2xx-response #/paths/~1_hookd~1tail/get/responses',
      'operation-4xx-response #/paths/~1_hookd~1openapi.json/get/responses',
    ]);
  });

  it('every operation has an id, a summary, error answers, and a schema for each answer with a body', () => {
    for (const [path, item] of Object.entries(served.paths)) {
      for (const m of METHODS) {
        const op = item[m] as
          | {
              operationId?: string;
              summary?: string;
              responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
            }
          | undefined;
        if (op === undefined) continue;
        const where = `${m.toUpperCase()} ${path}`;
        assert.ok(op.operationId, `${where}: operationId`);
        assert.ok(op.summary, `${where}: summary`);
        const codes = Object.keys(op.responses);
        if (path !== '/_hookd/openapi.json')
          assert.ok(
            codes.some((c) => /^4/.test(c)),
            `${where}: a 4xx answer`,
          );
        for (const [code, r] of Object.entries(op.responses)) {
          if (code === '204' || code === '101') continue;
          if (/^[45]/.test(code) && path.startsWith('/_hookd/listen')) continue;
          const media = Object.values(r.content ?? {});
          assert.ok(
            media.length > 0 && media.every((x) => x.schema !== undefined),
            `${where} ${code}: a schema`,
          );
        }
      }
    }
  });

  it('every request body and every answer with a body has an example, on its media type or its schema', () => {
    type Schema = { $ref?: string; example?: unknown; type?: string | string[]; items?: Schema };
    const schemas = (served.components as { schemas: Record<string, Schema> }).schemas;
    const exemplified = (s: Schema | undefined): boolean => {
      if (s === undefined) return false;
      if (s.$ref !== undefined) return exemplified(schemas[s.$ref.split('/').pop()!]);
      if (s.example !== undefined) return true;
      return s.type === 'array' && exemplified(s.items);
    };
    type Media = Record<string, { example?: unknown; examples?: unknown; schema?: Schema }>;
    const missing: string[] = [];
    for (const [path, item] of Object.entries(served.paths)) {
      for (const m of METHODS) {
        const op = item[m] as
          | { requestBody?: { content: Media }; responses: Record<string, { content?: Media }> }
          | undefined;
        if (op === undefined) continue;
        const parts: [string, Media | undefined][] = [
          ['request', op.requestBody?.content],
          ...Object.entries(op.responses).map(([c, r]) => [c, r.content] as [string, Media | undefined]),
        ];
        for (const [part, media] of parts) {
          if (media === undefined || path === '/_hookd/openapi.json') continue;
          const ok = Object.values(media).every(
            (x) => x.example !== undefined || x.examples !== undefined || exemplified(x.schema),
          );
          if (!ok) missing.push(`${m.toUpperCase()} ${path} ${part}`);
        }
      }
    }
    assert.deepEqual(missing, []);
  });

  it('every route hookd/client calls is in the document', async () => {
    const agent = new MockAgent();
    agent.disableNetConnect();
    const calls: string[] = [];
    agent
      .get('http://hookd.test')
      .intercept({ path: () => true, method: () => true })
      .reply(
        200,
        (o) => {
          calls.push(`${o.method} ${o.path.split('?')[0]}`);
          return [];
        },
        { headers: { 'content-type': 'application/json' } },
      )
      .persist();
    const c = new HookdClient({ baseUrl: 'http://hookd.test', token: 't', dispatcher: agent });
    const drain = async (it: AsyncIterable<unknown>) => {
      for await (const _x of it);
    };
    const hook = { PathPattern: '/x', Methods: ['GET'], Callback: 'http://r/cb' };
    await drain(c.hooks.list());
    await c.hooks.get('h');
    await c.hooks.create(hook);
    await c.hooks.replace('h', hook, { ifMatch: '"1"' });
    await c.hooks.delete('h');
    await c.hooks.enable('h');
    await c.hooks.validate(hook);
    await c.hooks.match({ Method: 'GET', Path: '/x' });
    await c.hooks.redeliver('h', { status: 'failed' });
    await c.hookTypes();
    await c.report({ Method: 'GET', Path: '/x' }, { idempotencyKey: 'k' });
    await drain(c.deliveries.list({ hook: 'h', status: 'failed' }));
    await c.deliveries.get('dl_1');
    await c.deliveries.redeliver('dl_1');
    await c.deliveries.redeliverAll('h');
    await c.secrets.get('h');
    await c.secrets.rotate('h');
    await c.users.list();
    await c.users.get('u');
    await c.users.add({ Name: 'u', Scopes: ['own'] });
    await c.users.replace('u', { Name: 'u', Scopes: ['own'] });
    await c.users.remove('u');
    await c.users.tokens.list('u');
    await c.users.tokens.create('u', { Label: 'l' });
    await c.users.tokens.revoke('u', 't1');
    await c.portalLinks.create({ User: 'u' });
    await c.notifications.list();
    await c.notifications.get('n');
    await c.notifications.create({ Url: 'http://r/n' });
    await c.notifications.delete('n');
    await c.notifications.deliveries('n');
    await c.reload();
    await c.openApi();
    await agent.close();
    const templates = Object.keys(served.paths).map((p) => ({
      p,
      re: new RegExp(`^${p.replace(/\{[^}]+\}/g, '[^/]+')}$`),
    }));
    const missing = calls.filter((call) => {
      const [method, path] = call.split(' ') as [string, string];
      const t = templates.find((x) => x.re.test(path));
      return t === undefined || served.paths[t.p]![method.toLowerCase()] === undefined;
    });
    assert.deepEqual(missing, []);
    // One call per client method; hooks.redeliver and deliveries.redeliverAll share their route.
    assert.equal(calls.length, 33, calls.join('\n'));
    assert.equal(new Set(calls).size, 32);
    // The tail is a WebSocket, not through the dispatcher: its path is described too.
    assert.ok(served.paths['/_hookd/tail']?.get);
  });
});

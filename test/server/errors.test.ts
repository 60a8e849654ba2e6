import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { newToken } from '../../src/auth/token.js';
import { type ApiResponse, api, startHookd, type TestDaemon } from '../helpers/hookd.js';

interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  errors?: { field: string; message: string }[];
}

const ok = { PathPattern: '/a/(*)', Callback: 'http://127.0.0.1:9/hook', Methods: ['GET'] };
const SOME_ID = 'hk_0000000000ZZZZZZZZZZZZZZZZZZZZ';

/** Every hook endpoint of SPEC §7, with a body where the method takes one. */
const HOOK_ENDPOINTS: [string, string, unknown][] = [
  ['GET', '/hooks', undefined],
  ['POST', '/hooks', ok],
  ['GET', `/hooks/${SOME_ID}`, undefined],
  ['PUT', `/hooks/${SOME_ID}`, ok],
  ['DELETE', `/hooks/${SOME_ID}`, undefined],
  ['GET', '/hooktypes', undefined],
];

/** Checks an RFC 9457 problem: media type, status in body and line, stable code. */
function assertProblem(r: ApiResponse<unknown>, status: number, code: string): Problem {
  assert.equal(r.status, status, r.text.slice(0, 500));
  assert.match(r.headers.get('content-type') ?? '', /^application\/problem\+json/, r.text.slice(0, 300));
  const p = r.body as Problem;
  assert.equal(p.status, status);
  assert.equal(p.code, code);
  assert.equal(p.type, `urn:hookd:problem:${code.toLowerCase().replaceAll('_', '-')}`);
  assert.equal(typeof p.title, 'string');
  assert.ok(p.title.length > 0);
  assert.equal(typeof p.detail, 'string');
  assert.ok(p.detail.length > 0);
  return p;
}

/** A request with exactly these headers (fetch would add or normalise some). */
function raw(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string | Buffer,
): Promise<ApiResponse<unknown>> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, method, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = text;
        try {
          parsed = text ? JSON.parse(text) : undefined;
        } catch {
          // not JSON: the assertions will say so
        }
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') h.set(k, v);
        resolve({ status: res.statusCode ?? 0, headers: h, body: parsed, text });
      });
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

describe('API errors over HTTP', () => {
  let d: TestDaemon;
  before(async () => {
    d = await startHookd();
  });
  after(async () => {
    await d.close();
  });

  describe('401 Unauthenticated', () => {
    for (const [method, path, body] of HOOK_ENDPOINTS) {
      it(`${method} ${path} without a token`, async () => {
        const p = assertProblem(await api(d.url, undefined, method, path, body), 401, 'UNAUTHENTICATED');
        assert.match(p.detail, /Authorization: Bearer/);
      });
    }

    it('every endpoint answers 401 with WWW-Authenticate: Bearer', async () => {
      for (const [method, path, body] of HOOK_ENDPOINTS) {
        const r = await api(d.url, undefined, method, path, body);
        assert.match(r.headers.get('www-authenticate') ?? '', /^Bearer\b/, `${method} ${path}`);
      }
    });

    const fake = newToken().token;
    const BAD: [string, string][] = [
      ['junk', 'Bearer junk'],
      ['an unknown token of the right shape', `Bearer ${fake}`],
      ['a tampered secret', 'TAMPER'],
      ['the Basic scheme', `Basic ${Buffer.from('admin:x').toString('base64')}`],
      ['a bare token without scheme', 'TOKEN'],
      ['two credentials', 'Bearer a, Bearer b'],
    ];
    for (const [what, header] of BAD) {
      it(`with ${what}`, async () => {
        let value = header;
        if (value === 'TOKEN') value = d.token;
        if (value === 'TAMPER')
          value = `Bearer ${d.token.slice(0, -2)}${d.token.endsWith('AA') ? 'BB' : 'AA'}`;
        for (const [method, path, body] of HOOK_ENDPOINTS) {
          const r = await api(d.url, undefined, method, path, body, { authorization: value });
          const p = assertProblem(r, 401, 'UNAUTHENTICATED');
          assert.match(r.headers.get('www-authenticate') ?? '', /^Bearer\b/);
          assert.match(p.detail, /not valid/);
          assert.equal(r.text.includes(value), false, 'the credentials are echoed back');
        }
      });
    }

    it('authentication comes before the lookup: an unknown id without a token is 401, not 404', async () => {
      assertProblem(await api(d.url, undefined, 'GET', `/hooks/${SOME_ID}`), 401, 'UNAUTHENTICATED');
      assertProblem(await api(d.url, 'Bearer x', 'DELETE', '/hooks/nope'), 401, 'UNAUTHENTICATED');
    });

    it('authentication comes before validation: an invalid body without a token is 401', async () => {
      assertProblem(await api(d.url, undefined, 'POST', '/hooks', '{"broken'), 401, 'UNAUTHENTICATED');
    });
  });

  describe('404 Not Found', () => {
    it('an unknown hook id, for every method that names one', async () => {
      for (const [method, body] of [
        ['GET', undefined],
        ['PUT', ok],
        ['DELETE', undefined],
      ] as const) {
        const p = assertProblem(
          await api(d.url, d.token, method, `/hooks/${SOME_ID}`, body),
          404,
          'NOT_FOUND',
        );
        assert.ok(p.detail.includes(SOME_ID), p.detail);
      }
    });

    it('an unknown resource below an API root', async () => {
      assertProblem(await api(d.url, d.token, 'GET', '/hooks/x/y'), 404, 'NOT_FOUND');
    });

    it('a path outside the API when there is no upstream, naming --upstream', async () => {
      const p = assertProblem(await api(d.url, undefined, 'GET', '/repositories/r1'), 404, 'NOT_FOUND');
      assert.match(p.detail, /--upstream/);
    });

    it('an over-long id is a problem document too', async () => {
      const r = await api(d.url, d.token, 'GET', `/hooks/${'a'.repeat(300)}`);
      assert.ok(r.status === 404 || r.status === 414, String(r.status));
      assert.match(r.headers.get('content-type') ?? '', /^application\/problem\+json/);
    });

    it('a malformed percent-escape in the id is a problem document too', async () => {
      const r = await raw(d.url, 'GET', '/hooks/%zz', { authorization: `Bearer ${d.token}` });
      assert.ok(r.status === 400 || r.status === 404, String(r.status));
      assert.match(r.headers.get('content-type') ?? '', /^application\/problem\+json/);
    });
  });

  describe('405 Method Not Allowed, with Allow', () => {
    const CASES: [string, string, string][] = [
      ['PATCH', '/hooks/x', 'GET, PUT, DELETE, HEAD'],
      ['POST', `/hooks/${SOME_ID}`, 'GET, PUT, DELETE, HEAD'],
      ['DELETE', '/hooks', 'GET, POST, HEAD'],
      ['PUT', '/hooks', 'GET, POST, HEAD'],
      ['PATCH', '/hooks', 'GET, POST, HEAD'],
      ['POST', '/hooktypes', 'GET, HEAD'],
      ['DELETE', '/hooktypes', 'GET, HEAD'],
      ['PUT', '/_hookd/openapi.json', 'GET, HEAD'],
    ];
    for (const [method, path, allow] of CASES) {
      it(`${method} ${path} → Allow: ${allow}`, async () => {
        const r = await api(d.url, d.token, method, path, method === 'DELETE' ? undefined : {});
        assertProblem(r, 405, 'METHOD_NOT_ALLOWED');
        assert.equal(r.headers.get('allow'), allow);
      });
    }

    it('OPTIONS answers 204 with Allow', async () => {
      const r = await api(d.url, d.token, 'OPTIONS', '/hooks');
      assert.equal(r.status, 204);
      assert.equal(r.headers.get('allow'), 'GET, POST, HEAD');
    });

    it('a method hookd does not know at all (PROPFIND) is 405 too', async () => {
      const r = await raw(d.url, 'PROPFIND', '/hooks', { authorization: `Bearer ${d.token}` });
      assert.equal(r.status, 405);
      assert.equal(r.headers.get('allow'), 'GET, POST, HEAD');
    });

    it('HEAD /hooks is allowed: 200 without a body', async () => {
      const r = await api(d.url, d.token, 'HEAD', '/hooks');
      assert.equal(r.status, 200);
      assert.equal(r.text, '');
    });
  });

  describe('413 Payload Too Large', () => {
    it('a 3 MiB body, named with the limit', async () => {
      const body = JSON.stringify({ ...ok, CallbackContent: 'x'.repeat(3 * 1024 * 1024) });
      const p = assertProblem(await api(d.url, d.token, 'POST', '/hooks', body), 413, 'PAYLOAD_TOO_LARGE');
      assert.match(p.detail, /1048576/);
    });

    it('a 3 MiB body on replace', async () => {
      const body = `{"x":"${'y'.repeat(3 * 1024 * 1024)}"}`;
      assertProblem(await api(d.url, d.token, 'PUT', `/hooks/${SOME_ID}`, body), 413, 'PAYLOAD_TOO_LARGE');
    });

    it('a body just under the limit is read (and judged on its content)', async () => {
      const body = JSON.stringify({ ...ok, CallbackContent: 'x'.repeat(1024 * 1024 - 200) });
      const r = await api<Problem>(d.url, d.token, 'POST', '/hooks', body);
      // Under the byte limit but over CallbackContent's 64 KiB: a validation error, not 413.
      assertProblem(r, 400, 'VALIDATION_FAILED');
    });
  });

  describe('415 Unsupported Media Type', () => {
    const JSON_HOOK = JSON.stringify(ok);
    for (const type of [
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/xml',
      'application/merge-patch+json',
    ]) {
      it(`Content-Type: ${type}`, async () => {
        const p = assertProblem(
          await api(d.url, d.token, 'POST', '/hooks', JSON_HOOK, { 'content-type': type }),
          415,
          'UNSUPPORTED_MEDIA_TYPE',
        );
        assert.match(p.detail, /application\/json/);
      });
    }

    it('Content-Type: text/plain', async () => {
      const r = await api(d.url, d.token, 'POST', '/hooks', JSON_HOOK, { 'content-type': 'text/plain' });
      assertProblem(r, 415, 'UNSUPPORTED_MEDIA_TYPE');
    });

    it('application/json with parameters and in any case is JSON', async () => {
      for (const type of ['application/json; charset=utf-8', 'Application/JSON']) {
        const r = await api<{ Id: string }>(
          d.url,
          d.token,
          'POST',
          '/hooks',
          { ...ok, Persist: false },
          { 'content-type': type },
        );
        assert.equal(r.status, 201, `${type}: ${r.text}`);
        await api(d.url, d.token, 'DELETE', `/hooks/${r.body.Id}`);
      }
    });

    it('a body without Content-Type is read as JSON (curl --data-binary without -H)', async () => {
      const body = JSON.stringify({ ...ok, Persist: false });
      const r = await raw(
        d.url,
        'POST',
        '/hooks',
        { authorization: `Bearer ${d.token}`, 'content-length': String(Buffer.byteLength(body)) },
        body,
      );
      assert.equal(r.status, 201, r.text);
      await api(d.url, d.token, 'DELETE', `/hooks/${(r.body as { Id: string }).Id}`);
    });

    it('a POST without Content-Type and without a body says the body is empty', async () => {
      const r = await raw(d.url, 'POST', '/hooks', { authorization: `Bearer ${d.token}` });
      assertProblem(r, 400, 'MALFORMED_JSON');
    });
  });

  describe('public endpoints need no token', () => {
    it('GET /healthz (on the operations listener)', async () => {
      const r = await api(d.opsUrl, undefined, 'GET', '/healthz');
      assert.equal(r.status, 200);
      assert.deepEqual(r.body, { status: 'ok' });
    });

    it('GET /readyz (on the operations listener)', async () => {
      const r = await api<{ status: string }>(d.opsUrl, undefined, 'GET', '/readyz');
      assert.equal(r.status, 200);
      assert.equal(r.body.status, 'ready');
    });

    it('GET /openapi.json describes the hook API', async () => {
      const r = await api<{ openapi: string; paths: Record<string, Record<string, unknown>> }>(
        d.url,
        undefined,
        'GET',
        '/_hookd/openapi.json',
      );
      assert.equal(r.status, 200);
      assert.equal(r.body.openapi, '3.1.0');
      for (const p of ['/hooks', '/hooks/{id}', '/hooktypes']) assert.ok(r.body.paths[p], p);
      assert.deepEqual(Object.keys(r.body.paths['/hooks']!).sort(), ['get', 'post']);
      assert.deepEqual(Object.keys(r.body.paths['/hooks/{id}']!).sort(), [
        'delete',
        'get',
        'parameters',
        'put',
      ]);
    });

    it('a bad token does not stand in the way of a public endpoint', async () => {
      assert.equal((await api(d.url, 'Bearer junk', 'GET', '/_hookd/openapi.json', undefined)).status, 200);
    });
  });

  describe('no 5xx for anything a client sends', () => {
    it('odd paths, queries and headers', async () => {
      const auth = { authorization: `Bearer ${d.token}` };
      const probes: [string, string, Record<string, string>, string?][] = [
        ['GET', '/hooks?limit[]=1', auth],
        ['GET', '/hooks?after[x]=1', auth],
        ['GET', '/hooks?limit=%', auth],
        ['GET', '/hooks/%F0%9F%98%80', auth],
        ['GET', '/hooks/a;b', auth],
        ['GET', '/hooks/%', auth],
        ['GET', `/hooks/${'a'.repeat(5000)}`, auth],
        ['POST', '/hooks', { ...auth, 'content-type': ';;;' }, '{}'],
        ['POST', '/hooks', { ...auth, 'content-type': 'application/json; charset=latin1' }, '{}'],
        ['POST', '/hooks', { ...auth, 'content-type': 'application/json', 'content-length': '0' }],
        ['POST', '/hooks', { ...auth, 'content-type': 'application/json', 'content-encoding': 'gzip' }, '{}'],
        ['TRACE', '/hooks', auth],
        ['GET', '/hooks', { authorization: `Bearer ${'x'.repeat(8000)}` }],
        ['GET', '/hooks', { authorization: 'Bearer \u00ff' }],
      ];
      for (const [method, path, headers, body] of probes) {
        const r = await raw(d.url, method, path, headers, body);
        assert.ok(
          r.status >= 200 && r.status < 500,
          `${method} ${path.slice(0, 40)}: ${r.status} ${r.text.slice(0, 200)}`,
        );
      }
    });
  });
});

describe('503 when events are disabled (--no-events)', () => {
  let d: TestDaemon;
  before(async () => {
    d = await startHookd({ eventsEnabled: false });
  });
  after(async () => {
    await d.close();
  });

  for (const [method, path, body] of HOOK_ENDPOINTS) {
    it(`${method} ${path} → 503 saying how to enable events`, async () => {
      const p = assertProblem(await api(d.url, d.token, method, path, body), 503, 'EVENTS_DISABLED');
      assert.match(p.detail, /events are disabled/);
      assert.match(p.detail, /--no-events/);
      assert.match(p.detail, /HOOKD_EVENTS=true|"enabled": true/);
    });
  }

  it('answers 503 whoever asks, with or without a token', async () => {
    for (const [method, path, body] of HOOK_ENDPOINTS) {
      assertProblem(await api(d.url, undefined, method, path, body), 503, 'EVENTS_DISABLED');
    }
  });

  it('creates nothing: the store stays empty', async () => {
    await api(d.url, d.token, 'POST', '/hooks', ok);
    assert.deepEqual(await d.hookd.store.allHooks(), []);
  });

  it('health, readiness and the API description still answer', async () => {
    assert.equal((await api(d.opsUrl, undefined, 'GET', '/healthz')).status, 200);
    assert.equal((await api(d.opsUrl, undefined, 'GET', '/readyz')).status, 200);
    assert.equal((await api(d.url, undefined, 'GET', '/_hookd/openapi.json')).status, 200);
  });
});

describe('a smaller body limit (--body-limit)', () => {
  let d: TestDaemon;
  before(async () => {
    d = await startHookd({ bodyLimit: 2048 });
  });
  after(async () => {
    await d.close();
  });

  it('is enforced and named in the detail', async () => {
    const body = JSON.stringify({ ...ok, CallbackContent: 'x'.repeat(3000) });
    const p = assertProblem(await api(d.url, d.token, 'POST', '/hooks', body), 413, 'PAYLOAD_TOO_LARGE');
    assert.match(p.detail, /2048 bytes/);
    const small = await api(d.url, d.token, 'POST', '/hooks', { ...ok, CallbackContent: 'x'.repeat(1000) });
    assert.equal(small.status, 201, small.text);
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { api, startHookd, type TestDaemon } from '../helpers/hookd.js';

interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  errors?: { field: string; message: string }[];
}

const ok = {
  PathPattern: '/repositories/*/timeseries/(*)',
  Callback: 'http://127.0.0.1:9/hook',
  Methods: ['GET'],
};

let d: TestDaemon;
let snapshot: unknown;

before(async () => {
  d = await startHookd();
  for (let i = 0; i < 3; i++) {
    const r = await api(d.url, d.token, 'POST', '/hooks', {
      ...ok,
      PathPattern: `/kept/${i}`,
      Persist: i !== 1,
    });
    assert.equal(r.status, 201, r.text);
  }
  snapshot = (await api(d.url, d.token, 'GET', '/hooks')).body;
});
after(async () => {
  await d.close();
});

/** POSTs the body and checks it is refused with 400 VALIDATION_FAILED naming exactly these fields. */
async function refused(body: unknown, fields: string[], method = 'POST', path = '/hooks'): Promise<Problem> {
  const r = await api<Problem>(d.url, d.token, method, path, body);
  assert.equal(r.status, 400, r.text);
  assert.match(r.headers.get('content-type') ?? '', /^application\/problem\+json/);
  assert.equal(r.body.code, 'VALIDATION_FAILED');
  assert.equal(r.body.type, 'urn:hookd:problem:validation-failed');
  assert.equal(r.body.status, 400);
  assert.ok(Array.isArray(r.body.errors), r.text);
  assert.deepEqual(r.body.errors.map((e) => e.field).sort(), [...fields].sort(), r.text);
  for (const e of r.body.errors) {
    assert.equal(typeof e.message, 'string');
    assert.ok(e.message.length > 3, r.text);
    assert.ok(r.body.detail.includes(e.message), `detail does not carry "${e.message}"`);
  }
  const n = r.body.errors.length;
  assert.ok(r.body.detail.startsWith(`the hook has ${n} error${n === 1 ? '' : 's'}`), r.body.detail);
  return r.body;
}

const messageOf = (p: Problem, field: string) => p.errors!.find((e) => e.field === field)!.message;

describe('required fields', () => {
  it('each of PathPattern, Callback, Methods is required, and all missing ones are named', async () => {
    await refused({}, ['PathPattern', 'Callback', 'Methods']);
    for (const f of ['PathPattern', 'Callback', 'Methods'] as const) {
      const { [f]: _gone, ...rest } = ok;
      const p = await refused(rest, [f]);
      assert.equal(messageOf(p, f), 'is required');
    }
  });

  it('empty strings and an empty method list are refused', async () => {
    await refused({ ...ok, PathPattern: '', Callback: '', Methods: [] }, [
      'PathPattern',
      'Callback',
      'Methods',
    ]);
  });
});

describe('wrong types', () => {
  const CASES: [string, unknown, string][] = [
    ['PathPattern', 5, 'must be a string'],
    ['PathPattern', ['/a'], 'must be a string'],
    ['Callback', { url: 'x' }, 'must be a string'],
    ['Methods', 'GET', 'must be an array'],
    ['Type', '1', 'must be an integer'],
    ['Type', 1.5, 'must be an integer'],
    ['StatusCodeBlackList', 500, 'must be an array'],
    ['StatusCodeWhiteList', null, 'must be an array'],
    ['CallbackMethod', 1, 'must be a string'],
    ['CallbackContent', { a: 1 }, 'must be a string'],
    ['CallbackContentMediaType', true, 'must be a string'],
    ['Headers', [], 'must be an object'],
    ['Headers', 'X-A: 1', 'must be an object'],
    ['Persist', 'true', 'must be a boolean'],
    ['Persist', 1, 'must be a boolean'],
    ['Persist', null, 'must be a boolean'],
  ];
  for (const [field, value, message] of CASES) {
    it(`${field}: ${JSON.stringify(value)} → "${message}"`, async () => {
      // A wrong type may break a second rule of the same field (a string Type is neither an
      // integer nor 0 or 1); every error must still be about that field and no other.
      const r = await api<Problem>(d.url, d.token, 'POST', '/hooks', { ...ok, [field]: value });
      assert.equal(r.status, 400, r.text);
      assert.equal(r.body.code, 'VALIDATION_FAILED');
      const p = r.body;
      assert.ok(p.errors!.length >= 1 && p.errors!.every((e) => e.field === field), r.text);
      assert.ok(
        p.errors!.some((e) => e.field === field && e.message === message),
        JSON.stringify(p.errors),
      );
    });
  }

  it('element types inside lists and Headers are checked, naming the element', async () => {
    await refused({ ...ok, Methods: ['GET', 7] }, ['Methods[1]']);
    await refused({ ...ok, StatusCodeBlackList: [200, '404'] }, ['StatusCodeBlackList[1]']);
    await refused({ ...ok, StatusCodeWhiteList: [200.5] }, ['StatusCodeWhiteList[0]']);
    await refused({ ...ok, Headers: { 'X-A': 1 } }, ['Headers.X-A']);
    await refused({ ...ok, Headers: { 'X-A': null } }, ['Headers.X-A']);
  });
});

describe('values', () => {
  it('Type must be one of GET /hooktypes', async () => {
    for (const t of [2, -1, 100]) {
      const p = await refused({ ...ok, Type: t }, ['Type']);
      assert.match(messageOf(p, 'Type'), /0 \(BeforeCompletion\) or 1 \(AfterCompletion\)/);
    }
  });

  it('status codes are integers from 100 to 599', async () => {
    const p = await refused({ ...ok, StatusCodeBlackList: [99, 100, 599, 600] }, [
      'StatusCodeBlackList[0]',
      'StatusCodeBlackList[3]',
    ]);
    assert.match(messageOf(p, 'StatusCodeBlackList[0]'), /100 to 599/);
  });

  it('non-empty status lists with Type 0 are refused, each list named', async () => {
    for (const f of ['StatusCodeBlackList', 'StatusCodeWhiteList']) {
      const p = await refused({ ...ok, Type: 0, [f]: [200] }, [f]);
      assert.match(messageOf(p, f), /Type 0/);
    }
    await refused({ ...ok, Type: 0, StatusCodeBlackList: [500], StatusCodeWhiteList: [200] }, [
      'StatusCodeBlackList',
      'StatusCodeWhiteList',
    ]);
  });

  it('Methods must be method tokens or "*"', async () => {
    await refused({ ...ok, Methods: ['GE T'] }, ['Methods[0]']);
    await refused({ ...ok, Methods: ['GET\r\n'] }, ['Methods[0]']);
    await refused({ ...ok, Methods: Array.from({ length: 33 }, (_, i) => `M${i}`) }, ['Methods']);
  });

  it('CallbackMethod is one of POST, PUT, PATCH, DELETE, GET', async () => {
    for (const m of ['HEAD', 'OPTIONS', 'CONNECT', 'TRACE', 'FOO', '']) {
      const p = await refused({ ...ok, CallbackMethod: m }, ['CallbackMethod']);
      assert.match(messageOf(p, 'CallbackMethod'), /POST, PUT, PATCH, DELETE, GET/);
    }
  });

  it('CallbackContentMediaType must be a media type', async () => {
    for (const mt of [
      'json',
      'application/',
      'application/json\r\nX-Evil: 1',
      ' application/json',
      'a/b; c',
    ]) {
      await refused({ ...ok, CallbackContentMediaType: mt }, ['CallbackContentMediaType']);
    }
  });

  it('CallbackContent may hold tab, CR and LF but no other control character', async () => {
    await refused({ ...ok, CallbackContent: 'a\u0000b' }, ['CallbackContent']);
    await refused({ ...ok, CallbackContent: 'bell\u0007' }, ['CallbackContent']);
    const r = await api<{ Id: string; CallbackContent: string }>(d.url, d.token, 'POST', '/hooks', {
      ...ok,
      CallbackContent: 'line 1\r\n\tline 2\n',
      Persist: false,
    });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.CallbackContent, 'line 1\r\n\tline 2\n');
    await api(d.url, d.token, 'DELETE', `/hooks/${r.body.Id}`);
  });

  it('length limits are enforced', async () => {
    await refused({ ...ok, CallbackContent: 'x'.repeat(65537) }, ['CallbackContent']);
    await refused({ ...ok, Callback: `http://127.0.0.1/${'a'.repeat(2048)}` }, ['Callback']);
    await refused({ ...ok, PathPattern: `/${'a'.repeat(2048)}` }, ['PathPattern']);
  });
});

describe('PathPattern syntax (SPEC §3)', () => {
  const BAD: [string, RegExp][] = [
    ['/repositories/ts-*', /wildcard must be a whole segment/],
    ['/a/*b', /wildcard must be a whole segment/],
    ['/a/(*', /wildcard must be a whole segment/],
    ['a//b', /empty/],
    ['/a/$/b', /must be the last segment/],
    ['/$/a', /must be the last segment/],
    ['/a$', /must be a segment of its own/],
    ['/(x)', /only `\(\*\)` may be parenthesised/],
    ['/((*))', /wildcard must be a whole segment|parenthesised/],
    ['/a?b=1', /query string/],
    ['/a#frag', /fragment/],
    ['/a/%zz', /percent-encoding/],
    ['/a\u0000b', /control character/],
    ['/a\tb', /control character/],
  ];
  for (const [pattern, re] of BAD) {
    it(`${JSON.stringify(pattern)} is refused`, async () => {
      const p = await refused({ ...ok, PathPattern: pattern }, ['PathPattern']);
      assert.match(messageOf(p, 'PathPattern'), re);
    });
  }

  for (const pattern of [
    '/',
    '/$',
    'a/b',
    '/a/b/',
    '/repositories/*/timeseries/(*)/$',
    '/a%20b/(*)/(*)',
    '/%2A',
  ]) {
    it(`${JSON.stringify(pattern)} is accepted as written`, async () => {
      const r = await api<{ Id: string; PathPattern: string }>(d.url, d.token, 'POST', '/hooks', {
        ...ok,
        PathPattern: pattern,
        Persist: false,
      });
      assert.equal(r.status, 201, r.text);
      assert.equal(r.body.PathPattern, pattern);
      assert.equal((await api(d.url, d.token, 'DELETE', `/hooks/${r.body.Id}`)).status, 204);
    });
  }
});

describe('Headers', () => {
  it('values with CR, LF or NUL are refused (no header injection)', async () => {
    for (const v of ['a\r\nX-Evil: 1', 'a\nb', 'a\rb', 'a\u0000b']) {
      const p = await refused({ ...ok, Headers: { 'X-Note': v } }, ['Headers.X-Note']);
      assert.match(messageOf(p, 'Headers.X-Note'), /CR, LF, NUL/);
    }
  });

  it('names must be tokens', async () => {
    await refused({ ...ok, Headers: { 'Bad Name': 'x' } }, ['Headers.Bad Name']);
    await refused({ ...ok, Headers: { 'X-A:': 'x' } }, ['Headers.X-A:']);
    await refused({ ...ok, Headers: { '': 'x' } }, ['Headers.']);
    const p = await refused({ ...ok, Headers: { 'X\r\nEvil': 'x' } }, ['Headers.X\\u000d\\u000aEvil']);
    assert.equal(p.detail.includes('\r'), false);
  });

  it('names hookd sets itself are reserved, whatever their case', async () => {
    for (const name of [
      'Host',
      'content-length',
      'Content-Type',
      'Transfer-Encoding',
      'Connection',
      'webhook-signature',
      'Webhook-Id',
    ]) {
      const p = await refused({ ...ok, Headers: { [name]: 'x' } }, [`Headers.${name}`]);
      if (name === 'Content-Type')
        assert.match(messageOf(p, 'Headers.Content-Type'), /CallbackContentMediaType/);
    }
  });

  it('a name given twice in different case is refused', async () => {
    await refused({ ...ok, Headers: { 'X-A': '1', 'x-a': '2' } }, ['Headers.x-a']);
  });

  it('more than 64 headers are refused', async () => {
    const many = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`X-H${i}`, 'v']));
    await refused({ ...ok, Headers: many }, ['Headers']);
  });
});

describe('Callback', () => {
  const BAD: [string, RegExp][] = [
    ['/relative/path', /absolute http: or https: URL/],
    ['//127.0.0.1/x', /absolute http: or https: URL/],
    ['127.0.0.1:9/x', /scheme|absolute/],
    ['ftp://127.0.0.1/x', /scheme "ftp" is not allowed/],
    ['file:///etc/passwd', /scheme "file" is not allowed/],
    ['javascript:alert(1)', /scheme "javascript" is not allowed/],
    ['http://127.0.0.1/a b', /without spaces/],
    ['http://127.0.0.1/\u0000', /absolute http: or https: URL/],
  ];
  for (const [url, re] of BAD) {
    it(`${JSON.stringify(url)} is refused`, async () => {
      const p = await refused({ ...ok, Callback: url }, ['Callback']);
      assert.match(messageOf(p, 'Callback'), re);
    });
  }

  describe('SSRF policy: a daemon without an allow list refuses internal targets', () => {
    let strict: TestDaemon;
    before(async () => {
      strict = await startHookd({ allowCallbackNets: [] });
    });
    after(async () => {
      await strict.close();
    });

    const CASES: [string, string][] = [
      ['http://127.0.0.1/', '127.0.0.1'],
      ['http://localhost/', '127.0.0.1'],
      ['http://169.254.169.254/latest/meta-data/', '169.254.169.254'],
      ['http://10.1.2.3/', '10.1.2.3'],
      ['http://[::1]:8080/', '::1'],
      ['http://[::ffff:127.0.0.1]/', '127.0.0.1'],
      ['http://0x7f.1/', '127.0.0.1'],
    ];
    for (const [url, address] of CASES) {
      it(`${url} is refused, naming ${address} and --allow-callback-net`, async () => {
        const r = await api<Problem>(strict.url, strict.token, 'POST', '/hooks', { ...ok, Callback: url });
        assert.equal(r.status, 400, r.text);
        assert.equal(r.body.code, 'VALIDATION_FAILED');
        assert.deepEqual(
          r.body.errors!.map((e) => e.field),
          ['Callback'],
        );
        const msg = r.body.errors![0]!.message;
        assert.ok(msg.includes(address), msg);
        assert.ok(msg.includes('--allow-callback-net'), msg);
      });
    }

    it('the same refusal applies on replace', async () => {
      const made = await api<{ Id: string }>(strict.url, strict.token, 'POST', '/hooks', {
        ...ok,
        Callback: 'http://8.8.8.8/hook',
      });
      assert.equal(made.status, 201, made.text);
      const r = await api<Problem>(strict.url, strict.token, 'PUT', `/hooks/${made.body.Id}`, {
        ...ok,
        Callback: 'http://169.254.169.254/',
      });
      assert.equal(r.status, 400, r.text);
      assert.match(r.body.errors![0]!.message, /169\.254\.169\.254/);
      const still = await api<{ Callback: string }>(
        strict.url,
        strict.token,
        'GET',
        `/hooks/${made.body.Id}`,
      );
      assert.equal(still.body.Callback, 'http://8.8.8.8/hook');
    });

    it('the message reads cleanly after the field name', async () => {
      const r = await api<Problem>(strict.url, strict.token, 'POST', '/hooks', {
        ...ok,
        Callback: 'http://127.0.0.1/',
      });
      assert.equal(r.body.detail.includes('Callback Callback'), false, r.body.detail);
    });
  });

  it('loopback targets are accepted when the loopback net is allowed', async () => {
    for (const url of ['http://127.0.0.1:9/', 'http://localhost:9/x', 'http://[::1]:9/']) {
      const r = await api<{ Id: string; Callback: string }>(d.url, d.token, 'POST', '/hooks', {
        ...ok,
        Callback: url,
        Persist: false,
      });
      assert.equal(r.status, 201, `${url}: ${r.text}`);
      assert.equal(r.body.Callback, url);
      await api(d.url, d.token, 'DELETE', `/hooks/${r.body.Id}`);
    }
  });

  it('the metadata address stays refused even with the loopback allow list', async () => {
    const r = await api<Problem>(d.url, d.token, 'POST', '/hooks', {
      ...ok,
      Callback: 'http://169.254.169.254/',
    });
    assert.equal(r.status, 400, r.text);
  });
});

describe('unknown fields', () => {
  it('are named, with "did you mean" for a different spelling of a known field', async () => {
    const p = await refused({ ...ok, pathPattern: '/x' }, ['pathPattern']);
    assert.match(messageOf(p, 'pathPattern'), /did you mean `PathPattern`\?/);
    const p2 = await refused({ ...ok, Calback: 'x' }, ['Calback']);
    assert.match(messageOf(p2, 'Calback'), /did you mean `Callback`\?/);
    const p3 = await refused({ ...ok, method: ['GET'] }, ['method']);
    assert.match(messageOf(p3, 'method'), /is not a hook field/);
  });

  it('a field nobody would confuse lists the known fields', async () => {
    const p = await refused({ ...ok, frobnicate: 1 }, ['frobnicate']);
    assert.match(messageOf(p, 'frobnicate'), /known fields: PathPattern, Callback, Methods/);
  });

  it('keys with control characters are named printably', async () => {
    const p = await refused({ ...ok, 'Pa\u0000th': 1 }, ['Pa\\u0000th']);
    assert.equal(p.detail.includes('\u0000'), false);
  });
});

describe('many errors in one body are all reported', () => {
  it('reports every broken rule with its field', async () => {
    const p = await refused(
      {
        pathPattern: '/x',
        Callback: 'ftp://example.com/',
        Methods: [],
        Type: 7,
        StatusCodeBlackList: [42],
        CallbackMethod: 'HEAD',
        CallbackContentMediaType: 'nonsense',
        Headers: { Host: 'x', 'X-A': 'a\nb' },
        Persist: 'yes',
      },
      [
        'PathPattern',
        'pathPattern',
        'Callback',
        'Methods',
        'Type',
        'StatusCodeBlackList[0]',
        'CallbackMethod',
        'CallbackContentMediaType',
        'Headers.Host',
        'Headers.X-A',
        'Persist',
      ],
    );
    assert.equal(p.errors!.length, 11);
    assert.ok(p.detail.startsWith('the hook has 11 errors'));
  });

  it('reports pattern, status-list and header rules together', async () => {
    await refused(
      {
        ...ok,
        PathPattern: 'ts-*',
        Type: 0,
        StatusCodeWhiteList: [200],
        Headers: { 'Content-Length': '1', 'X-B': '\r' },
      },
      ['PathPattern', 'StatusCodeWhiteList', 'Headers.Content-Length', 'Headers.X-B'],
    );
  });
});

describe('read-only fields in input', () => {
  it('Id, Owner, Modified, State and $schema are accepted and ignored', async () => {
    const r = await api<Record<string, unknown>>(d.url, d.token, 'POST', '/hooks', {
      ...ok,
      Id: 'hk_chosen_by_client',
      Owner: 'mallory',
      Modified: '1999-01-01T00:00:00.000+00:00',
      State: 'disabled',
      $schema: 'https://hookd.dev/schema/hook.schema.json',
      Persist: false,
    });
    assert.equal(r.status, 201, r.text);
    assert.notEqual(r.body.Id, 'hk_chosen_by_client');
    assert.equal(r.body.Owner, 'admin');
    assert.notEqual(r.body.Modified, '1999-01-01T00:00:00.000+00:00');
    assert.equal(r.body.State, 'active');
    assert.equal('$schema' in r.body, false);
    assert.equal((await api(d.url, d.token, 'GET', '/hooks/hk_chosen_by_client')).status, 404);
    await api(d.url, d.token, 'DELETE', `/hooks/${r.body.Id as string}`);
  });

  it('read-only fields of any type, even junk, do not make a hook invalid', async () => {
    const r = await api<{ Id: string }>(d.url, d.token, 'POST', '/hooks', {
      ...ok,
      Id: { nested: [1, 2] },
      Owner: null,
      Modified: 12,
      State: ['x'],
      Persist: false,
    });
    assert.equal(r.status, 201, r.text);
    await api(d.url, d.token, 'DELETE', `/hooks/${r.body.Id}`);
  });
});

describe('junk bodies are a 4xx problem, never a 5xx', () => {
  const RAW: [string, string, string][] = [
    ['null', 'null', 'VALIDATION_FAILED'],
    ['an array', '[]', 'VALIDATION_FAILED'],
    ['an array of a hook', JSON.stringify([ok]), 'VALIDATION_FAILED'],
    ['a string', '"x"', 'VALIDATION_FAILED'],
    ['a number', '42', 'VALIDATION_FAILED'],
    ['true', 'true', 'VALIDATION_FAILED'],
    ['__proto__', '{"__proto__":{}}', 'MALFORMED_JSON'],
    [
      '__proto__ beside a valid hook',
      `{"__proto__":{"Persist":false},${JSON.stringify(ok).slice(1)}`,
      'MALFORMED_JSON',
    ],
    ['constructor.prototype', '{"constructor":{"prototype":{"x":1}}}', 'MALFORMED_JSON'],
    ['truncated JSON', '{"PathPattern":', 'MALFORMED_JSON'],
    ['trailing garbage', `${JSON.stringify(ok)}x`, 'MALFORMED_JSON'],
    ['two documents', `${JSON.stringify(ok)}${JSON.stringify(ok)}`, 'MALFORMED_JSON'],
    ['single quotes', "{'PathPattern':'/a'}", 'MALFORMED_JSON'],
    ['an empty body', '', 'MALFORMED_JSON'],
    ['whitespace', '   \n', 'MALFORMED_JSON'],
    ['a raw NUL', '\u0000', 'MALFORMED_JSON'],
    ['deep nesting', `${'['.repeat(5000)}${']'.repeat(5000)}`, 'VALIDATION_FAILED'],
  ];
  for (const [what, text, code] of RAW) {
    it(`${what} → 400 ${code}`, async () => {
      const r = await api<Problem>(d.url, d.token, 'POST', '/hooks', text, {
        'content-type': 'application/json',
      });
      assert.equal(r.status, 400, r.text);
      assert.match(r.headers.get('content-type') ?? '', /^application\/problem\+json/);
      assert.equal(r.body.code, code);
    });
  }

  it('a syntax error names its line and column: errors[0] has field, line and column (curl gets what hookctl says)', async () => {
    const text =
      '{\n  "PathPattern": "/a",\n  "Methods": ["GET"],\n  "Callback": "http://127.0.0.1:9/h",\n}\n';
    for (const [method, path] of [
      ['POST', '/hooks'],
      ['PUT', '/hooks/hk_0000000000ZZZZZZZZZZZZZZZZZZZZ'],
      ['POST', '/_hookd/notifications'],
    ] as const) {
      const r = await api<
        Problem & { errors: { field: string; line: number; column: number; message: string }[] }
      >(d.url, d.token, method, path, text, { 'content-type': 'application/json' });
      assert.equal(r.status, 400, r.text);
      assert.equal(r.body.code, 'MALFORMED_JSON');
      const [first] = r.body.errors;
      assert.deepEqual(
        { field: first?.field, line: first?.line, column: first?.column },
        {
          field: '(body)',
          line: 5,
          column: 1,
        },
      );
      assert.match(first!.message, /trailing comma/);
      assert.match(r.body.detail, /line 5, column 1/);
    }
    // A second line's bad token: the column counts from that line's start.
    const r = await api<Problem & { errors: { line: number; column: number }[] }>(
      d.url,
      d.token,
      'POST',
      '/hooks',
      '{"PathPattern": "/a",\n "Methods": [GET]}',
      { 'content-type': 'application/json' },
    );
    assert.deepEqual([r.body.errors[0]?.line, r.body.errors[0]?.column], [2, 14]);
  });

  it('NUL bytes inside every string field are refused or ignored, never stored', async () => {
    const nul = '\u0000';
    await refused(
      {
        PathPattern: `/a${nul}`,
        Callback: `http://127.0.0.1/${nul}`,
        Methods: [`GET${nul}`],
        CallbackMethod: `POST${nul}`,
        CallbackContent: nul,
        CallbackContentMediaType: `text/plain${nul}`,
        Headers: { 'X-A': nul, [`X-${nul}`]: 'v' },
      },
      [
        'PathPattern',
        'Callback',
        'Methods[0]',
        'CallbackMethod',
        'CallbackContent',
        'CallbackContentMediaType',
        'Headers.X-A',
        'Headers.X-\\u0000',
      ],
    );
  });

  it('a body over the limit (3 MiB) is 413', async () => {
    const big = JSON.stringify({ ...ok, CallbackContent: 'x'.repeat(3 * 1024 * 1024) });
    const r = await api<Problem>(d.url, d.token, 'POST', '/hooks', big);
    assert.equal(r.status, 413, r.text.slice(0, 300));
    assert.equal(r.body.code, 'PAYLOAD_TOO_LARGE');
  });

  it('invalid UTF-8 in a key is refused', async () => {
    const body = Buffer.concat([Buffer.from('{"P'), Buffer.from([0xff, 0xfe]), Buffer.from('":1}')]);
    const r = await fetch(`${d.url}/hooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${d.token}`, 'content-type': 'application/json' },
      body,
    });
    assert.equal(r.status, 400);
    assert.match(r.headers.get('content-type') ?? '', /^application\/problem\+json/);
  });

  it('invalid UTF-8 inside a string value is refused, not stored as U+FFFD', async () => {
    const body = Buffer.concat([
      Buffer.from(`${JSON.stringify({ ...ok, Persist: false }).slice(0, -1)},"CallbackContent":"a`),
      Buffer.from([0xff, 0xc3, 0x28]),
      Buffer.from('b"}'),
    ]);
    const r = await fetch(`${d.url}/hooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${d.token}`, 'content-type': 'application/json' },
      body,
    });
    const text = await r.text();
    if (r.status === 201)
      await api(d.url, d.token, 'DELETE', `/hooks/${(JSON.parse(text) as { Id: string }).Id}`);
    assert.equal(r.status, 400, text);
  });

  it('random JSON documents and random field values never cause a 5xx', async () => {
    const fields = [
      'PathPattern',
      'Callback',
      'Methods',
      'Type',
      'StatusCodeBlackList',
      'StatusCodeWhiteList',
      'CallbackMethod',
      'CallbackContent',
      'CallbackContentMediaType',
      'Headers',
      'Persist',
      'Id',
      '__proto__',
      'constructor',
    ];
    const value = fc.jsonValue({ maxDepth: 3 });
    const body = fc.oneof(
      value,
      fc.dictionary(fc.constantFrom(...fields), value, { maxKeys: 8 }),
      fc.record({ PathPattern: fc.string(), Callback: fc.string(), Methods: fc.array(fc.string()) }),
    );
    await fc.assert(
      fc.asyncProperty(body, async (b) => {
        const r = await api<Problem & { Id?: string }>(d.url, d.token, 'POST', '/hooks', JSON.stringify(b));
        assert.ok(r.status < 500, `${r.status} for ${JSON.stringify(b)}: ${r.text}`);
        if (r.status === 201) {
          await api(d.url, d.token, 'DELETE', `/hooks/${r.body.Id}`);
        } else {
          assert.equal(r.status, 400, r.text);
          assert.match(r.headers.get('content-type') ?? '', /^application\/problem\+json/);
          assert.ok(typeof r.body.code === 'string' && typeof r.body.detail === 'string');
        }
      }),
      { numRuns: 150 },
    );
  });
});

describe('a bad request loses nothing', () => {
  it('the hooks stored before all the refused requests above are exactly as they were', async () => {
    const now = await api(d.url, d.token, 'GET', '/hooks');
    assert.deepEqual(now.body, snapshot);
  });
});

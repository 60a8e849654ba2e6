// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${NAME}` is template syntax under test, not a mistake.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createContext, runInContext } from 'node:vm';
import fc from 'fast-check';
import {
  compileTemplate,
  DEFAULT_MAX_BODY_BYTES,
  defaultEventDocument,
  TEMPLATE_VARIABLES,
  type TemplateContext,
  TemplateSizeError,
} from '../../src/hook/template.js';

const JSON_TYPE = 'application/json';
const TEXT_TYPE = 'text/plain';

function ctx(over: Partial<TemplateContext> = {}): TemplateContext {
  return {
    requestPath: '/repositories/r1/timeseries/ts1/attributes/unit',
    requestUri: 'https://data.example.com/repositories/r1/timeseries/ts1/attributes/unit?v=2',
    requestMethod: 'GET',
    statusCode: 200,
    hookId: 'hk_3Yk9pQ',
    hookType: 1,
    timestamp: '2026-11-22T12:00:00.000Z',
    captures: ['r1', 'unit'],
    ...over,
  };
}

/**
 * JSON.parse in a context of its own, the result copied into this one. V8's JSON.parse (Node 24
 * and 26) can read an escaped object key back as another key an earlier parse in the same context
 * met: after a document with the key `\` (one backslash, escaped), the key `\u0000` reads as a
 * backslash too (nodejs/node#63785). A property that parses many documents would then test V8's
 * parse, not the rendering; a fresh context has met no earlier key.
 */
function parseAlone(text: string): unknown {
  return structuredClone(runInContext('JSON.parse(text)', createContext({ text })));
}

const render = (template: string, c: TemplateContext = ctx(), mediaType = TEXT_TYPE) =>
  compileTemplate(template, mediaType).render(c);

// Values that try to break out of every kind of body.
const HOSTILE = [
  'quote " and \\" and \\',
  'back\\slash\\',
  'new\nline\r\ttab',
  '</script><script>alert(1)</script>',
  'unicode: žluťoučký 日本語 🎉',
  'line\u2028separator\u2029paragraph',
  'nul\u0000bell\u0007',
  '", "injected": true, "x": "',
  '$1 $REQUEST_PATH ${2}',
];

describe('template variables', () => {
  test('every named variable is replaced', () => {
    assert.equal(render('$REQUEST_PATH'), '/repositories/r1/timeseries/ts1/attributes/unit');
    assert.equal(
      render('$REQUEST_URI'),
      'https://data.example.com/repositories/r1/timeseries/ts1/attributes/unit?v=2',
    );
    assert.equal(render('$REQUEST_METHOD'), 'GET');
    assert.equal(render('$STATUS_CODE'), '200');
    assert.equal(render('$HOOK_ID'), 'hk_3Yk9pQ');
    assert.equal(render('$TIMESTAMP'), '2026-11-22T12:00:00.000Z');
    assert.equal(render('$1/$2'), 'r1/unit');
  });

  test('TEMPLATE_VARIABLES lists exactly the names the renderer knows', () => {
    assert.deepEqual(
      [...TEMPLATE_VARIABLES].sort(),
      [
        '$HOOK_ID',
        '$REQUEST_METHOD',
        '$REQUEST_PATH',
        '$REQUEST_URI',
        '$REQUEST_USER',
        '$STATUS_CODE',
        '$TIMESTAMP',
      ].sort(),
    );
    for (const name of TEMPLATE_VARIABLES) {
      assert.notEqual(render(`[${name}]`), `[${name}]`, `${name} was not replaced`);
      assert.equal(render(`[\${${name.slice(1)}}]`), render(`[${name}]`), `braced ${name}`);
    }
  });

  test('$REQUEST_USER: the user, escaped like any value; empty when anonymous', () => {
    assert.equal(render('[$REQUEST_USER]', ctx({ requestUser: 'alice' })), '[alice]');
    assert.equal(render('[$REQUEST_USER]', ctx()), '[]');
    assert.equal(render('[$REQUEST_USER]', ctx({ requestUser: '' })), '[]');
    const json = render('{"u":"$REQUEST_USER"}', ctx({ requestUser: 'a"b' }), JSON_TYPE);
    assert.equal(JSON.parse(json).u, 'a"b');
  });

  test('braced forms separate a variable from the text after it', () => {
    assert.equal(render('${REQUEST_METHOD}S'), 'GETS');
    assert.equal(render('$REQUEST_METHODS'), '$REQUEST_METHODS');
    assert.equal(render('${1}_${2}x'), 'r1_unitx');
    assert.equal(render('${HOOK_ID}${HOOK_ID}'), 'hk_3Yk9pQhk_3Yk9pQ');
  });

  test('unknown $words are left exactly as written', () => {
    for (const t of [
      '$schema',
      '$REQUEST_PATHS',
      '$request_path',
      '${nope}',
      '${REQUEST_PATH',
      '${}',
      '${ 1}',
      '$',
      '$-',
      'price: 5$',
      '$constructor $__proto__ $toString ${hasOwnProperty}',
    ]) {
      assert.equal(render(t), t);
    }
  });

  test('$$ is not an escape', () => {
    assert.equal(render('$$'), '$$');
    assert.equal(render('$$1'), '$r1');
    assert.equal(render('$$REQUEST_METHOD'), '$GET');
  });

  test('$STATUS_CODE is empty for BeforeCompletion and the status for AfterCompletion', () => {
    const t = compileTemplate('status=[$STATUS_CODE] [${STATUS_CODE}]', TEXT_TYPE);
    assert.equal(t.render(ctx({ hookType: 0, statusCode: undefined })), 'status=[] []');
    assert.equal(t.render(ctx({ hookType: 1, statusCode: 502 })), 'status=[502] [502]');
  });

  test('captures the pattern does not have are left as written', () => {
    assert.equal(render('$1 $2 $3 ${3} $0 ${0} $00'), 'r1 unit $3 ${3} $0 ${0} $00');
    assert.equal(render('$1', ctx({ captures: [] })), '$1');
    assert.equal(render('$99999999999999999999999'), '$99999999999999999999999');
  });

  test('$12 is capture twelve; ${1}2 is capture one then "2"', () => {
    const twelve = Array.from({ length: 12 }, (_, i) => `c${i + 1}`);
    assert.equal(render('$12', ctx({ captures: twelve })), 'c12');
    assert.equal(render('${1}2', ctx({ captures: twelve })), 'c12');
    assert.equal(render('$1x', ctx({ captures: twelve })), 'c1x');
    assert.equal(render('$12'), '$12');
    assert.equal(render('${1}2'), 'r12');
  });

  test('a compiled template renders each context independently', () => {
    const t = compileTemplate('{"p":"$REQUEST_PATH","c":"$1"}', JSON_TYPE);
    assert.equal(t.render(ctx({ requestPath: '/a', captures: ['x'] })), '{"p":"/a","c":"x"}');
    assert.equal(t.render(ctx({ requestPath: '/b', captures: [] })), '{"p":"/b","c":"$1"}');
  });

  test('a template without variables renders unchanged', () => {
    assert.equal(render('{"text": "hello"}', ctx(), JSON_TYPE), '{"text": "hello"}');
    assert.equal(render(''), '');
  });
});

describe('JSON escaping', () => {
  // The seed's second example: a chat message naming repository $1 and attribute $2 with a link
  // to $REQUEST_URI, in the Microsoft Teams adaptive-card format with its "$schema" key.
  const CARD = `{
  "type": "message",
  "attachments": [
    {
      "contentType": "application/vnd.microsoft.card.adaptive",
      "content": {
        "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
        "type": "AdaptiveCard",
        "version": "1.4",
        "body": [
          { "type": "TextBlock", "text": "Attribute $2 of repository $1 was read ($REQUEST_METHOD, status $STATUS_CODE)", "wrap": true }
        ],
        "actions": [{ "type": "Action.OpenUrl", "title": "Open", "url": "$REQUEST_URI" }]
      }
    }
  ]
}`;

  test('the adaptive card keeps "$schema" and fills in the variables', () => {
    const body = JSON.parse(render(CARD, ctx(), JSON_TYPE));
    const content = body.attachments[0].content;
    assert.equal(content.$schema, 'http://adaptivecards.io/schemas/adaptive-card.json');
    assert.equal(content.body[0].text, 'Attribute unit of repository r1 was read (GET, status 200)');
    assert.equal(content.actions[0].url, ctx().requestUri);
  });

  test('the card survives a template with no variables byte for byte', () => {
    const noVars = CARD.replace(/\$(?!schema)[A-Z0-9_]+/g, 'x');
    assert.ok(noVars.includes('"$schema": "http://adaptivecards.io/schemas/adaptive-card.json"'));
    assert.equal(render(noVars, ctx(), JSON_TYPE), noVars);
  });

  for (const hostile of HOSTILE) {
    test(`hostile value round-trips: ${JSON.stringify(hostile)}`, () => {
      const uri = `https://data.example.com/repositories/${hostile}?q=${hostile}`;
      const c = ctx({ captures: [hostile, `${hostile}2`], requestUri: uri, requestPath: `/${hostile}` });
      const out = render(CARD, c, JSON_TYPE);
      const body = JSON.parse(out);
      const content = body.attachments[0].content;
      assert.equal(
        content.body[0].text,
        `Attribute ${hostile}2 of repository ${hostile} was read (GET, status 200)`,
      );
      assert.equal(content.actions[0].url, uri);
      assert.equal(content.$schema, 'http://adaptivecards.io/schemas/adaptive-card.json');
      assert.deepEqual(Object.keys(body), ['type', 'attachments']);
      assert.ok(!/[\u2028\u2029]/.test(out), 'U+2028/U+2029 are escaped');
    });
  }

  test('a lone surrogate in a capture stays valid JSON and round-trips', () => {
    const lone = 'a\ud800b\udc00c';
    const out = render('{"v":"$1"}', ctx({ captures: [lone] }), JSON_TYPE);
    assert.equal(JSON.parse(out).v, lone);
  });

  test('the seed\'s bare "$REQUEST_PATH" template sends the bare path', () => {
    const path = '/repositories/r1/timeseries/ts1/data';
    assert.equal(render('$REQUEST_PATH', ctx({ requestPath: path }), JSON_TYPE), path);
    assert.equal(render('$REQUEST_PATH', ctx({ requestPath: '/a"b\\c' }), JSON_TYPE), '/a"b\\c');
  });

  test('a variable outside a string goes in as-is, so a status can be a number', () => {
    const out = render(
      '{"status": $STATUS_CODE, "path": "$REQUEST_PATH"}',
      ctx({ statusCode: 404 }),
      JSON_TYPE,
    );
    assert.deepEqual(JSON.parse(out), { status: 404, path: ctx().requestPath });
  });

  test('string tracking follows escaped quotes and backslashes in the template', () => {
    const c = ctx({ captures: ['"'] });
    // Inside: the \" does not end the string, so $1 is still inside it.
    assert.equal(render('{"a":"x\\"$1"}', c, JSON_TYPE), '{"a":"x\\"\\""}');
    // "\\" is a complete string, so the $1 after it is outside any string.
    assert.equal(render('["\\\\",$1]', c, JSON_TYPE), '["\\\\","]');
    // Keys are strings too.
    assert.equal(render('{"$1":1}', c, JSON_TYPE), '{"\\"":1}');
  });

  test('+json media types get JSON escaping; text/plain does not', () => {
    const c = ctx({ captures: ['a"b'] });
    assert.equal(render('{"v":"$1"}', c, 'application/vnd.api+json; charset=utf-8'), '{"v":"a\\"b"}');
    assert.equal(render('{"v":"$1"}', c, TEXT_TYPE), '{"v":"a"b"}');
  });

  test('escaped keys parse exactly one after another (the oracle of the property below)', () => {
    // A first key no other test uses, so that only these documents' keys follow it.
    const compiled = compileTemplate('{"oracle":0,"$1":"key"}', JSON_TYPE);
    for (const key of ['\\', '\u0000', '"', '\n'])
      assert.deepEqual(parseAlone(compiled.render(ctx({ captures: [key] }))), { oracle: 0, [key]: 'key' });
  });

  test('property: variables inside JSON strings always give valid JSON with exact values', () => {
    const template =
      '{"path":"$REQUEST_PATH","uri":"${REQUEST_URI}","m":"$REQUEST_METHOD","id":"x$HOOK_ID",' +
      '"caps":["$1","${2}-","$3"],"$schema":"keep","$1":"key"}';
    const compiled = compileTemplate(template, JSON_TYPE);
    // Every UTF-16 code unit (lone surrogates included), full code points, and the usual suspects.
    const unit = fc.oneof(
      fc.integer({ min: 0, max: 0xffff }).map((n) => String.fromCharCode(n)),
      fc.constantFrom('"', '\\', '\n', '\u2028', '\u2029', '$', '{', '}', '</script>', '\\u0022'),
      fc.string({ unit: 'binary', maxLength: 2 }),
    );
    const str = fc.string({ unit, maxLength: 24 });
    fc.assert(
      fc.property(
        str,
        str,
        str,
        str,
        fc.array(str, { minLength: 3, maxLength: 3 }),
        (path, uri, method, id, caps) => {
          const out = compiled.render(
            ctx({ requestPath: path, requestUri: uri, requestMethod: method, hookId: id, captures: caps }),
          );
          const parsed = parseAlone(out);
          assert.deepEqual(parsed, {
            path,
            uri,
            m: method,
            id: `x${id}`,
            caps: [caps[0], `${caps[1]}-`, caps[2]],
            $schema: 'keep',
            [caps[0]!]: 'key',
          });
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('XML, form and text escaping', () => {
  test('xml escapes markup characters in text and attributes', () => {
    const c = ctx({ captures: [`<b>"Tom" & 'Jerry'</b>`], requestUri: 'https://x.example/?a=1&b=<2>' });
    assert.equal(
      render('<msg href="$REQUEST_URI">$1</msg>', c, 'application/xml'),
      '<msg href="https://x.example/?a=1&amp;b=&lt;2&gt;">&lt;b&gt;&quot;Tom&quot; &amp; &apos;Jerry&apos;&lt;/b&gt;</msg>',
    );
  });

  test('xml keeps whitespace exact and replaces characters XML cannot carry', () => {
    const c = ctx({ captures: ['a\tb\nc\rd', 'nul\u0000 vt\u000b ffff\uffff lone\ud800 pair🎉'] });
    assert.equal(render('<a>$1</a>', c, 'text/xml'), '<a>a&#x9;b&#xA;c&#xD;d</a>');
    assert.equal(
      render('<a>$2</a>', c, 'application/atom+xml'),
      '<a>nul\ufffd vt\ufffd ffff\ufffd lone\ufffd pair🎉</a>',
    );
  });

  test('xml does not track JSON strings: quotes in the template change nothing', () => {
    const c = ctx({ captures: ['"'] });
    assert.equal(render('"$1" $1', c, 'application/xml'), '"&quot;" &quot;');
  });

  test('form values are percent-encoded and parse back exactly', () => {
    for (const hostile of [...HOSTILE, 'a&b=c d+e%20f']) {
      const c = ctx({ captures: [hostile, 'unit'], requestUri: `https://x.example/?q=${hostile}` });
      const out = render('repo=$1&attr=$2&link=$REQUEST_URI', c, 'application/x-www-form-urlencoded');
      const params = new URLSearchParams(out);
      assert.deepEqual([...params.keys()], ['repo', 'attr', 'link']);
      assert.equal(params.get('repo'), hostile);
      assert.equal(params.get('link'), c.requestUri);
    }
  });

  test('form encoding of a lone surrogate does not throw', () => {
    const out = render('v=$1', ctx({ captures: ['a\ud800b'] }), 'application/x-www-form-urlencoded');
    assert.equal(new URLSearchParams(out).get('v'), 'a\ufffdb');
  });

  test('other media types insert values as-is', () => {
    const c = ctx({ captures: ['<"&\n\\>'] });
    assert.equal(render('[$1]', c, 'text/plain'), '[<"&\n\\>]');
    assert.equal(render('[$1]', c, 'text/html'), '[<"&\n\\>]');
  });
});

describe('default event document', () => {
  test("names the request's user when there is one, and only then", () => {
    const withUser = JSON.parse(defaultEventDocument(ctx({ requestUser: 'alice' })));
    assert.equal(withUser.request.user, 'alice');
    assert.deepEqual(Object.keys(withUser.request), ['method', 'path', 'uri', 'user']);
    assert.equal('user' in JSON.parse(defaultEventDocument(ctx())).request, false);
  });

  test('AfterCompletion: every field, in order, statusCode included', () => {
    const out = compileTemplate(undefined, JSON_TYPE).render(ctx({ statusCode: 404 }));
    assert.equal(out, defaultEventDocument(ctx({ statusCode: 404 })));
    const doc = JSON.parse(out);
    assert.deepEqual(Object.keys(doc), [
      'event',
      'hookId',
      'hookType',
      'hookTypeName',
      'request',
      'statusCode',
      'captures',
      'timestamp',
    ]);
    assert.deepEqual(doc, {
      event: 'hook.fired',
      hookId: 'hk_3Yk9pQ',
      hookType: 1,
      hookTypeName: 'AfterCompletion',
      request: {
        method: 'GET',
        path: '/repositories/r1/timeseries/ts1/attributes/unit',
        uri: 'https://data.example.com/repositories/r1/timeseries/ts1/attributes/unit?v=2',
      },
      statusCode: 404,
      captures: ['r1', 'unit'],
      timestamp: '2026-11-22T12:00:00.000Z',
    });
  });

  test('BeforeCompletion: statusCode is left out', () => {
    const doc = JSON.parse(defaultEventDocument(ctx({ hookType: 0, statusCode: undefined })));
    assert.equal(doc.hookType, 0);
    assert.equal(doc.hookTypeName, 'BeforeCompletion');
    assert.ok(!('statusCode' in doc));
  });

  test('hostile values round-trip, and the document is JSON whatever the media type', () => {
    for (const hostile of HOSTILE) {
      const c = ctx({ requestPath: hostile, requestUri: hostile, captures: [hostile] });
      const doc = JSON.parse(compileTemplate(undefined, TEXT_TYPE).render(c));
      assert.equal(doc.request.path, hostile);
      assert.equal(doc.request.uri, hostile);
      assert.deepEqual(doc.captures, [hostile]);
    }
  });

  test('an empty template is an empty body, not the default document', () => {
    assert.equal(compileTemplate('', JSON_TYPE).render(ctx()), '');
  });
});

describe('limits and errors', () => {
  test('the default limit is 256 KiB', () => {
    assert.equal(DEFAULT_MAX_BODY_BYTES, 262144);
  });

  test('a body over the limit throws TemplateSizeError; one at the limit renders', () => {
    const t = compileTemplate('[$1]', TEXT_TYPE, { maxBytes: 10 });
    assert.equal(t.render(ctx({ captures: ['12345678'] })), '[12345678]');
    assert.throws(
      () => t.render(ctx({ captures: ['123456789'] })),
      (e: unknown) =>
        e instanceof TemplateSizeError && e.bytes === 11 && e.limit === 10 && /11 bytes/.test(e.message),
    );
  });

  test('the limit counts UTF-8 bytes, after escaping', () => {
    const t = compileTemplate('$1', TEXT_TYPE, { maxBytes: 8 });
    assert.equal(t.render(ctx({ captures: ['éééé'] })), 'éééé'); // 8 bytes
    assert.throws(() => t.render(ctx({ captures: ['ééééé'] })), TemplateSizeError); // 5 chars, 10 bytes
    assert.throws(() => t.render(ctx({ captures: ['🎉🎉🎉'] })), TemplateSizeError); // 6 units, 12 bytes
    const json = compileTemplate('"$1"', JSON_TYPE, { maxBytes: 8 });
    assert.equal(json.render(ctx({ captures: ['\n\n\n'] })), '"\\n\\n\\n"');
    assert.throws(() => json.render(ctx({ captures: ['\n\n\n\n'] })), TemplateSizeError);
  });

  test('the default limit applies: a large capture in a large card is refused', () => {
    const t = compileTemplate('{"text":"$1"}', JSON_TYPE);
    assert.throws(
      () => t.render(ctx({ captures: ['"'.repeat(DEFAULT_MAX_BODY_BYTES / 2)] })),
      TemplateSizeError,
    );
  });

  test('the default document is capped too', () => {
    const t = compileTemplate(undefined, JSON_TYPE, { maxBytes: 100 });
    assert.throws(() => t.render(ctx({ requestPath: `/${'x'.repeat(100)}` })), TemplateSizeError);
  });

  test('a template whose fixed text alone is over the limit is refused when compiled', () => {
    assert.throws(() => compileTemplate('x'.repeat(11), TEXT_TYPE, { maxBytes: 10 }), TemplateSizeError);
    assert.throws(
      () => compileTemplate(`${'x'.repeat(6)}$1${'y'.repeat(5)}`, TEXT_TYPE, { maxBytes: 10 }),
      TemplateSizeError,
    );
    // The variables may render empty, so only the fixed text counts at compile time.
    const t = compileTemplate(`${'x'.repeat(5)}$1${'y'.repeat(5)}`, TEXT_TYPE, { maxBytes: 10 });
    assert.equal(t.render(ctx({ captures: [''] })), 'xxxxxyyyyy');
  });

  test('an invalid media type or limit is a programming error', () => {
    assert.throws(() => compileTemplate('$1', 'application'), TypeError);
    assert.throws(() => compileTemplate(undefined, 'a b/c'), TypeError);
    assert.throws(() => compileTemplate('$1', TEXT_TYPE, { maxBytes: -1 }), RangeError);
    assert.throws(() => compileTemplate('$1', TEXT_TYPE, { maxBytes: 1.5 }), RangeError);
  });
});

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MAX_MEDIA_TYPE_LENGTH, mediaKind, parseMediaType } from '../../src/hook/media-type.js';

describe('parseMediaType', () => {
  const accepted: [string, string, Record<string, string>][] = [
    ['application/json', 'application/json', {}],
    ['application/vnd.api+json; charset=utf-8', 'application/vnd.api+json', { charset: 'utf-8' }],
    ['text/plain;charset="utf-8"', 'text/plain', { charset: 'utf-8' }],
    ['Application/JSON; Charset=UTF-8', 'application/json', { charset: 'UTF-8' }],
    ['text/plain \t;\t format=flowed ; delsp=yes', 'text/plain', { format: 'flowed', delsp: 'yes' }],
    [
      'text/plain; x="a \\"quoted\\" \\\\ value; with=semicolon"',
      'text/plain',
      { x: 'a "quoted" \\ value; with=semicolon' },
    ],
    ['text/plain; x=""', 'text/plain', { x: '' }],
    // RFC 9110 allows empty parameters, so a trailing or doubled `;` is valid.
    ['text/plain;', 'text/plain', {}],
    ['text/plain; ;charset=utf-8', 'text/plain', { charset: 'utf-8' }],
    ["application/x.my-type_1!#$%&'*+^`|~", "application/x.my-type_1!#$%&'*+^`|~", {}],
  ];
  for (const [value, essence, params] of accepted) {
    test(`accepts ${JSON.stringify(value)}`, () => {
      const mt = parseMediaType(value);
      assert.ok(mt, `expected ${value} to parse`);
      assert.equal(mt.essence, essence);
      assert.equal(`${mt.type}/${mt.subtype}`, essence);
      assert.deepEqual(mt.params, params);
    });
  }

  const rejected = [
    '',
    'application',
    'application/',
    '/json',
    'application/json\r\nX: y',
    'application/json\n',
    'application/json\u0000',
    'a b/c',
    'a/b c',
    ' application/json',
    'application/json ',
    'application//json',
    'application/json/x',
    'application/json;charset',
    'application/json; charset=',
    'application/json; charset =utf-8',
    'application/json; charset= utf-8',
    'application/json; charset=utf 8',
    'application/json charset=utf-8',
    'text/plain; x="unterminated',
    'text/plain; x="bad\\\u0001escape"',
    'text/plain; x="ctl\u0001"',
    'text/plain; x="caf\u00e9"',
    'tëxt/plain',
    'text/plain; x=a"b"',
    `application/${'x'.repeat(MAX_MEDIA_TYPE_LENGTH)}`,
  ];
  for (const value of rejected) {
    test(`rejects ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`, () => {
      assert.equal(parseMediaType(value), null);
    });
  }

  test('accepts exactly 255 characters and rejects 256', () => {
    const at = `application/${'x'.repeat(MAX_MEDIA_TYPE_LENGTH - 'application/'.length)}`;
    assert.equal(at.length, 255);
    assert.ok(parseMediaType(at));
    assert.equal(parseMediaType(`${at}x`), null);
  });

  test('the first of repeated parameters wins', () => {
    assert.deepEqual(parseMediaType('text/plain; charset=utf-8; Charset=latin1')?.params, {
      charset: 'utf-8',
    });
  });

  test('a parameter named __proto__ is plain data', () => {
    const mt = parseMediaType('text/plain; __proto__=x');
    assert.ok(mt);
    assert.equal(Object.getPrototypeOf(mt.params), Object.prototype);
    assert.ok(Object.hasOwn(mt.params, '__proto__'));
    assert.equal(Object.getOwnPropertyDescriptor(mt.params, '__proto__')?.value, 'x');
  });

  test('a non-string is rejected rather than thrown on', () => {
    assert.equal(parseMediaType(undefined as unknown as string), null);
  });
});

describe('mediaKind', () => {
  const table: [string, string][] = [
    ['application/json', 'json'],
    ['application/json; charset=utf-8', 'json'],
    ['APPLICATION/JSON', 'json'],
    ['application/vnd.api+json', 'json'],
    ['application/problem+json', 'json'],
    ['application/cloudevents+json; charset=utf-8', 'json'],
    ['application/xml', 'xml'],
    ['text/xml', 'xml'],
    ['application/atom+xml', 'xml'],
    ['image/svg+xml', 'xml'],
    ['application/x-www-form-urlencoded', 'form'],
    ['text/plain', 'text'],
    ['text/html', 'text'],
    ['text/json', 'text'],
    ['application/jsonl', 'text'],
    ['application/json-seq', 'text'],
    ['multipart/form-data; boundary=x', 'text'],
  ];
  for (const [value, kind] of table) {
    test(`${value} is ${kind}`, () => {
      const mt = parseMediaType(value);
      assert.ok(mt);
      assert.equal(mediaKind(mt), kind);
    });
  }
});

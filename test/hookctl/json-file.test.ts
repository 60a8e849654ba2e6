import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { JsonFileError } from '../../src/hookctl/exit-codes.js';
import { lineColumn, locateJsonError, parseJsonText } from '../../src/hookctl/json-file.js';

function errorAt(text: string): string {
  try {
    parseJsonText('hook.json', text);
  } catch (e) {
    assert.ok(e instanceof JsonFileError);
    return e.message;
  }
  assert.fail(`expected ${JSON.stringify(text)} to be rejected`);
}

describe('parseJsonText', () => {
  it('parses valid JSON (a leading BOM is allowed)', () => {
    assert.deepEqual(parseJsonText('h', '\ufeff{"a":[1,2]}'), { a: [1, 2] });
  });

  const CASES: [string, string, RegExp][] = [
    [
      'a missing comma between properties',
      '{\n  "a": 1\n  "b": 2\n}',
      /^hook\.json:3:3: expected ',' or '}' after a property value, got '"'$/,
    ],
    ['a trailing comma in an object', '{"a": 1,\n}', /^hook\.json:2:1: unexpected '}': trailing comma/],
    ['a trailing comma in an array', '{"a": [1, 2,]}', /^hook\.json:1:13: unexpected ']': trailing comma/],
    ['single quotes', "{'a': 1}", /^hook\.json:1:2: expected a property name in double quotes, got '''$/],
    [
      'a single-quoted value',
      '{"a": \'x\'}',
      /^hook\.json:1:7: unexpected ''': JSON strings use double quotes$/,
    ],
    ['an empty file', '  \n', /^hook\.json:1:1: the file is empty/],
    [
      'a truncated document',
      '{"a": [1, 2',
      /^hook\.json:1:12: expected ',' or ']' after an array element, got end of file$/,
    ],
    ['an unterminated string', '{"a": "x', /^hook\.json:1:7: unterminated string$/],
    ['a string cut by the end of the line', '{"a": "x\n', /^hook\.json:1:9: end of line in string/],
    ['a raw newline inside a string', '{"a": "x\ny"}', /^hook\.json:1:9: end of line in string/],
    ['a bad escape', '{"a": "\\x"}', /^hook\.json:1:8: invalid escape \\x$/],
    ['a bad literal', '{"a": tru}', /^hook\.json:1:10: unexpected '}' in literal \(expected true\)$/],
    ['a leading zero', '{"a": 01}', /^hook\.json:1:7: invalid number$/],
    [
      'garbage after the document',
      '{}\n{}',
      /^hook\.json:2:1: unexpected '\{' after the end of the JSON document$/,
    ],
    [
      'a comment',
      '{\n  // no comments\n  "a": 1}',
      /^hook\.json:2:3: expected a property name in double quotes, got '\/'$/,
    ],
  ];
  for (const [what, text, expected] of CASES) {
    it(`reports ${what} with line and column`, () => {
      assert.match(errorAt(text), expected);
    });
  }

  it('counts columns in characters, not bytes', () => {
    assert.match(errorAt('{"ä": "ö" "x"}'), /^hook\.json:1:11: /);
  });
});

describe('locateJsonError', () => {
  it('agrees with JSON.parse on whether a text is valid', () => {
    const valid = fc.json();
    // Valid documents, and the same documents with one character dropped, doubled or replaced.
    const mutated = fc
      .tuple(fc.json(), fc.nat(), fc.constantFrom('', ',', '"', '}', ']', ':', 'x', '\n', "'", '0'))
      .map(([text, at, ch]) => {
        const i = text.length ? at % text.length : 0;
        return text.slice(0, i) + ch + text.slice(i + 1);
      });
    fc.assert(
      fc.property(fc.oneof(valid, mutated), (text) => {
        let ok = true;
        try {
          JSON.parse(text);
        } catch {
          ok = false;
        }
        const found = locateJsonError(text);
        assert.equal(found === undefined, ok, `${JSON.stringify(text)}: ${found?.message}`);
        if (found) assert.ok(found.offset >= 0 && found.offset <= text.length);
      }),
      { numRuns: 400 },
    );
  });
});

describe('lineColumn', () => {
  it('is 1-based and restarts the column after each newline', () => {
    assert.deepEqual(lineColumn('ab\ncd', 0), { line: 1, column: 1 });
    assert.deepEqual(lineColumn('ab\ncd', 3), { line: 2, column: 1 });
    assert.deepEqual(lineColumn('ab\ncd', 5), { line: 2, column: 3 });
  });
});

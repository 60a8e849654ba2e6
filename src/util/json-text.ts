/** A JSON syntax error, located: `NAME:LINE:COLUMN: what`. */
export class JsonTextError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JsonTextError';
  }
}

/**
 * Parses JSON text (a hook file, the daemon's config file). On a syntax error the message is
 * `NAME:LINE:COLUMN: what`, computed here because V8's own messages carry no position for several
 * errors (and never a line). It lives in util/ because both hookctl/ and config/ read JSON, and
 * neither may import the other without closing a circle of files.
 */
export function parseJsonText(name: string, text: string): unknown {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  try {
    return JSON.parse(body);
  } catch (e) {
    const found = locateJsonError(body) ?? { offset: 0, message: (e as Error).message };
    const { line, column } = lineColumn(body, found.offset);
    throw new JsonTextError(`${name}:${line}:${column}: ${found.message}`);
  }
}

/** 1-based line and column (in characters) of a string offset. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      start = i + 1;
    }
  }
  return { line, column: offset - start + 1 };
}

/**
 * A strict JSON (RFC 8259) scanner that finds the first syntax error and says what was expected.
 * Returns undefined when the text is valid.
 */
export function locateJsonError(text: string): { offset: number; message: string } | undefined {
  let i = 0;
  const fail = (message: string, at = i): never => {
    throw { offset: at, message };
  };
  const describe = (at: number): string => {
    if (at >= text.length) return 'end of file';
    const c = text[at]!;
    if (c === '\n' || c === '\r') return 'end of line';
    const code = c.charCodeAt(0);
    if (code < 0x20) return `control character U+${code.toString(16).padStart(4, '0')}`;
    return `'${c}'`;
  };
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const literal = (word: string) => {
    for (let k = 0; k < word.length; k++) {
      if (text[i + k] !== word[k]) fail(`unexpected ${describe(i + k)} in literal (expected ${word})`, i + k);
    }
    i += word.length;
  };
  const string = () => {
    const open = i;
    i++; // opening quote
    for (;;) {
      if (i >= text.length) fail('unterminated string', open);
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return;
      }
      if (c < 0x20) fail(`${describe(i)} in string (write it as an escape such as \\n)`);
      if (c === 0x5c) {
        const e = text[i + 1];
        if (e === 'u') {
          if (!/^[0-9A-Fa-f]{4}$/.test(text.slice(i + 2, i + 6)))
            fail('invalid \\u escape (4 hex digits expected)');
          i += 6;
          continue;
        }
        if (e === undefined || !'"\\/bfnrt'.includes(e)) fail(`invalid escape \\${e ?? ''}`);
        i += 2;
        continue;
      }
      i++;
    }
  };
  const number = () => {
    const start = i;
    const m = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!m) fail('invalid number');
    i += m![0].length;
    if (/^[0-9.eE+-]/.test(text[i] ?? '')) fail('invalid number', start);
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{') object();
    else if (c === '[') array();
    else if (c === '"') string();
    else if (c === 't') literal('true');
    else if (c === 'f') literal('false');
    else if (c === 'n') literal('null');
    else if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) number();
    else if (c === "'") fail(`unexpected ${describe(i)}: JSON strings use double quotes`);
    else {
      fail(
        i >= text.length
          ? 'unexpected end of file, a value was expected'
          : `unexpected ${describe(i)}, a value was expected`,
      );
    }
  };
  const object = () => {
    i++;
    ws();
    if (text[i] === '}') {
      i++;
      return;
    }
    for (;;) {
      ws();
      if (text[i] !== '"') {
        if (text[i] === '}') fail(`unexpected '}': trailing comma before it`);
        fail(`expected a property name in double quotes, got ${describe(i)}`);
      }
      string();
      ws();
      if (text[i] !== ':') fail(`expected ':' after the property name, got ${describe(i)}`);
      i++;
      value();
      ws();
      if (text[i] === ',') {
        i++;
        continue;
      }
      if (text[i] === '}') {
        i++;
        return;
      }
      fail(`expected ',' or '}' after a property value, got ${describe(i)}`);
    }
  };
  const array = () => {
    i++;
    ws();
    if (text[i] === ']') {
      i++;
      return;
    }
    for (;;) {
      ws();
      if (text[i] === ']') fail(`unexpected ']': trailing comma before it`);
      value();
      ws();
      if (text[i] === ',') {
        i++;
        continue;
      }
      if (text[i] === ']') {
        i++;
        return;
      }
      fail(`expected ',' or ']' after an array element, got ${describe(i)}`);
    }
  };
  try {
    ws();
    if (i >= text.length) fail('the file is empty; a JSON object (the hook) was expected', 0);
    value();
    ws();
    if (i < text.length) fail(`unexpected ${describe(i)} after the end of the JSON document`);
    return undefined;
  } catch (e) {
    if (e && typeof e === 'object' && 'offset' in e) return e as { offset: number; message: string };
    return undefined; // e.g. nesting too deep for this recursive scanner: fall back to V8's message
  }
}

import type { FastifyError } from 'fastify';
import { ERRORS, type ErrorCode, HookdError } from '../errors/index.js';
import { lineColumn, locateJsonError } from '../util/index.js';

/**
 * Maps what Fastify and its body parser throw onto the catalog, so that nothing a client sent
 * becomes a 500. Anything else is a bug of ours: logged, and answered without internals.
 */
export function fromFrameworkError(err: FastifyError | Error, bodyLimit: number): HookdError | undefined {
  if (err instanceof HookdError) return err;
  const code = (err as FastifyError).code;
  const status = (err as FastifyError).statusCode;
  switch (code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new HookdError(
        'PAYLOAD_TOO_LARGE',
        `the request body is larger than the limit of ${bodyLimit} bytes`,
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new HookdError(
        'UNSUPPORTED_MEDIA_TYPE',
        'the request body must be JSON: send Content-Type: application/json',
      );
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new HookdError('MALFORMED_JSON', 'the request body is empty; send a JSON document');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new HookdError('BAD_REQUEST', 'the Content-Length header does not match the body');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new HookdError('MALFORMED_JSON', `the request body is not valid JSON: ${err.message}`);
  }
  if (err instanceof SyntaxError || /prototype property/.test(err.message)) {
    const detail = /prototype property/.test(err.message)
      ? 'the JSON body contains a forbidden key (__proto__ or constructor.prototype)'
      : `the request body is not valid JSON: ${err.message}`;
    return new HookdError('MALFORMED_JSON', detail);
  }
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const entry =
      (Object.keys(ERRORS) as ErrorCode[]).find((c) => ERRORS[c].status === status) ?? 'BAD_REQUEST';
    return new HookdError(entry, err.message);
  }
  return undefined;
}

/**
 * A body that is not JSON, said as hookctl says a file: the first syntax error with its line and
 * column (`errors[0]` carries them beside `field`), where the parser's own message has a
 * character offset at best. Undefined when the text is valid JSON (the refusal was another one).
 */
export function jsonSyntaxError(text: string): HookdError | undefined {
  const at = locateJsonError(text);
  if (at === undefined) return undefined;
  const { line, column } = lineColumn(text, at.offset);
  return new HookdError(
    'MALFORMED_JSON',
    `the request body is not valid JSON: line ${line}, column ${column}: ${at.message}`,
    { errors: [{ field: '(body)', line, column, message: at.message }] },
  );
}

/**
 * `nats://USER:PASS@HOST:PORT/SUBJECT-TEMPLATE`: the subject is the path without its leading
 * `/`, URL-decoded, dots as NATS writes them (`nats://127.0.0.1:4222/ts.$1.read`).
 */
import { type BrokerTarget, brokerTarget, escapeForBroker, safeDecode } from '../broker-link/index.js';

export const NATS_PORT = 4222;

/** A rendered NATS Callback, ready to publish. */
export interface NatsTarget extends BrokerTarget {
  readonly subject: string;
}

// A value fills one subject token: `.` would add tokens, `*` and `>` are wildcards, whitespace and
// control characters end a subject on the wire, `$` at the front makes a subject the server's
// ($JS, $SYS), and `%` is escaped so that the encoding can be read back.
const SPECIAL = /[%.*>$\s\p{Cc}]/gu;

/** A template value escaped for a NATS subject token, then URL-encoded for the Callback URL. */
export function escapeSubjectValue(value: string): string {
  return escapeForBroker(value, SPECIAL);
}

/** The subject of a URL: its path without the leading `/`, decoded (undefined when malformed). */
export function subjectOf(url: URL): string | undefined {
  return safeDecode(url.pathname.replace(/^\//, ''));
}

// A template reference at the front ($1, ${1}, $REQUEST_PATH…) is a value, escaped when rendered;
// the names are the template's own (a transport does not import the hook model).
const LEADING_REFERENCE =
  /^\$(\{?\d|\{?(REQUEST_PATH|REQUEST_URI|REQUEST_METHOD|REQUEST_USER|STATUS_CODE|HOOK_ID|TIMESTAMP)\b)/;

/** The rule a subject breaks (templates unrendered or rendered), or undefined. */
export function subjectProblem(subject: string): string | undefined {
  if (subject === '') return 'must name the NATS subject as its path, e.g. nats://127.0.0.1:4222/ts.$1.read';
  for (const w of ['*', '>']) {
    if (subject.includes(w)) {
      return `the subject must not contain the wildcard "${w}": a publish names one subject, wildcards are for subscribers`;
    }
  }
  if (/[\s\p{Cc}]/u.test(subject)) return 'the subject must not contain whitespace or control characters';
  if (subject.split('.').includes('')) {
    return `the subject ${subject} has an empty token (a leading, trailing or double ".")`;
  }
  if (subject.startsWith('$') && !LEADING_REFERENCE.test(subject)) {
    return 'the subject must not start with "$": such subjects are the server\'s own ($JS, $SYS)';
  }
  return undefined;
}

/** The create-time check of a NATS Callback (templates unrendered). */
export function checkNatsUrl(url: URL): string | undefined {
  if (url.hostname === '') return 'must name the NATS server host, e.g. nats://127.0.0.1:4222/ts.$1.read';
  if (url.hash !== '' || url.href.endsWith('#')) return 'must not have a "#" fragment';
  if ([...url.searchParams.keys()].length > 0)
    return 'takes no query options (a NATS Callback is nats://HOST:PORT/SUBJECT)';
  const subject = subjectOf(url);
  if (subject === undefined) return 'the subject is not well percent-encoded (write "%" as %25)';
  return subjectProblem(subject);
}

/** The publish target of a rendered Callback URL, or the rule it breaks. */
export function parseNatsUrl(url: URL): NatsTarget | string {
  const problem = checkNatsUrl(url);
  if (problem !== undefined) return problem;
  return { ...brokerTarget(url, NATS_PORT), subject: subjectOf(url)! };
}

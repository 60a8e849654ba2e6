import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isValidUserName, USER_NAME_RULE } from '../auth/index.js';
import type { MatchEngine, Trigger } from '../engine/index.js';
import { type FieldError, HookdError } from '../errors/index.js';
import { principalOf, resource } from '../http-api/index.js';
import type { Tracing } from '../tracing/index.js';
import { CONTENT_FIELDS, contentErrors, contentOf, type ServedContent } from './served-content.js';

const MAX_BATCH = 1000;
const METHOD = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,32}$/;

interface ServedRequest extends ServedContent {
  Method: string;
  Path: string;
  Query?: string;
  StatusCode?: number;
  Phase?: 'before' | 'after' | 'both';
  Uri?: string;
  /** Who made the request (the request counts as made by that user); absent: anonymous. */
  User?: string;
}

/**
 * `POST /report` (SPEC §9: a service that is not behind the proxy reports what it served, and
 * hooks fire exactly as for proxied requests) and `POST /match` (the dry run: what would fire).
 */
export function triggerRoutes(
  app: FastifyInstance,
  engine: MatchEngine,
  baseUri: (req: FastifyRequest) => string,
  /** A reason to refuse reports up front (the store refuses writes: 503 STORE_UNAVAILABLE). */
  refuse?: () => HookdError | undefined,
  tracing?: Tracing,
  /**
   * Whether the caller may report requests made by anyone (the admin, a user granted `report`).
   * Absent: everyone may (a bare API in tests). Without it a report is the caller's own.
   */
  reportsForAnyone?: (user: string) => Promise<boolean>,
  /**
   * Whether the request is hookd's own (a valid loop mark, src/loops/), counted as a
   * loop cut when it is. Absent: none is (a bare API in tests).
   */
  isOwnRequest?: (req: FastifyRequest) => boolean,
  /** How much of a reported body the filters see (`--filter-body-limit`), and the hidden headers. */
  content: { bodyLimit: number; hiddenHeaders: readonly string[] } = {
    bodyLimit: 64 * 1024,
    hiddenHeaders: [],
  },
): void {
  const inside = (s: ServedRequest) => contentOf(s, content.bodyLimit, content.hiddenHeaders);
  /** The owner whose hooks alone may fire for the caller's report; undefined: any owner's. */
  const reporterOf = async (req: FastifyRequest, served: ServedRequest[]): Promise<string | undefined> => {
    const caller = principalOf(req).user;
    if (reportsForAnyone === undefined || (await reportsForAnyone(caller))) return undefined;
    const at = served.findIndex((s) => s.User !== undefined && s.User !== caller);
    if (at !== -1) {
      const field = Array.isArray(req.body) ? `[${at}].User` : 'User';
      throw new HookdError(
        'FORBIDDEN',
        `a report is made by its caller: User must be "${caller}" or left out (reporting requests made by others needs the report permission, which the admin grants: hookctl users grant NAME --permission report)`,
        { errors: [{ field, message: `must be "${caller}" or left out` }] },
      );
    }
    return caller;
  };
  resource(
    app,
    '/_hookd/report',
    {
      POST: async (req, reply) => {
        // Nothing fires while the store refuses writes: a 202 would promise recorded callbacks.
        const refused = refuse?.();
        if (refused) throw refused;
        const items = Array.isArray(req.body) ? (req.body as unknown[]) : [req.body];
        if (items.length === 0 || items.length > MAX_BATCH) {
          throw new HookdError('BAD_REQUEST', `send one served request or an array of 1 to ${MAX_BATCH}`);
        }
        const parsed = items.map((item, i) => parseServed(item, Array.isArray(req.body) ? `[${i}]` : ''));
        const errors = parsed.flatMap((p) => (Array.isArray(p) ? p : []));
        if (errors.length) {
          throw new HookdError('VALIDATION_FAILED', `the report has ${errors.length} error(s)`, { errors });
        }
        // A callback or notification of hookd's aimed at this endpoint (under any name) is a loop:
        // accepted, so that it is not retried, and fires nothing, as on the proxy.
        if (isOwnRequest?.(req)) return reply.code(202).send({ accepted: parsed.length, fired: 0 });
        const onlyOwner = await reporterOf(req, parsed as ServedRequest[]);
        let fired = 0;
        // The report's span is the parent of the fire spans, as a proxied request's is.
        const span = tracing?.request(req.raw, 'POST /_hookd/report');
        for (const s of parsed as ServedRequest[]) {
          const phase = s.Phase ?? (s.StatusCode === undefined ? 'before' : 'both');
          const [path, query] = splitQuery(s.Path);
          const q = s.Query ?? query;
          const uri = () => s.Uri ?? `${baseUri(req)}${path}${q ? `?${q}` : ''}`;
          const t: Trigger = {
            method: s.Method.toUpperCase(),
            path,
            uri,
            user: s.User ?? '',
            trace: span?.ref,
            ...(onlyOwner !== undefined && { onlyOwner }),
            ...inside(s),
          };
          if (phase !== 'after') fired += await engine.fireAndWait('before', t);
          if (phase !== 'before')
            fired += await engine.fireAndWait('after', { ...t, statusCode: s.StatusCode! });
        }
        span?.end(202);
        return reply.code(202).send({ accepted: parsed.length, fired });
      },
    },
    { events: true },
  );

  resource(
    app,
    '/_hookd/match',
    {
      POST: async (req, reply) => {
        const s = parseServed(req.body, '');
        if (Array.isArray(s))
          throw new HookdError('VALIDATION_FAILED', `the dry run request has ${s.length} error(s)`, {
            errors: s,
          });
        await reporterOf(req, [s]);
        const [path, query] = splitQuery(s.Path);
        const q = s.Query ?? query;
        const t: Trigger = {
          method: s.Method.toUpperCase(),
          path,
          uri: () => s.Uri ?? `${baseUri(req)}${path}${q ? `?${q}` : ''}`,
          user: s.User ?? '',
          ...(s.StatusCode !== undefined && { statusCode: s.StatusCode }),
          ...inside(s),
        };
        const previews = await engine.preview(principalOf(req).user, t);
        return reply.send(
          previews.map((p) => ({
            HookId: p.hook.Id,
            Type: p.hook.Type,
            Captures: p.captures,
            // Which statuses it fires for; NeedsStatus: no StatusCode was given and these decide.
            ...(p.hook.Type === 1 && {
              StatusCodeWhiteList: p.hook.StatusCodeWhiteList,
              StatusCodeBlackList: p.hook.StatusCodeBlackList,
            }),
            ...(p.needsStatus && { NeedsStatus: true }),
            ...(p.filter !== undefined && {
              Filter: { Matched: p.filter.matched, Error: p.filter.error ?? null },
            }),
            ...(p.transform !== undefined && {
              Transform: {
                Payload: p.transform.payload ?? null,
                Headers: p.transform.headers,
                Skip: p.transform.skip,
                Error: p.transform.error ?? null,
              },
            }),
            Request: {
              Method: p.request.method,
              Url: p.request.url,
              Headers: p.request.headers,
              ...(p.request.body !== undefined && { Body: p.request.body }),
            },
          })),
        );
      },
    },
    { events: true },
  );
}

function splitQuery(p: string): [string, string | undefined] {
  const i = p.indexOf('?');
  return i === -1 ? [p, undefined] : [p.slice(0, i), p.slice(i + 1)];
}

function parseServed(item: unknown, at: string): ServedRequest | FieldError[] {
  const errors: FieldError[] = [];
  const f = (name: string) => (at ? `${at}.${name}` : name);
  if (item === null || typeof item !== 'object' || Array.isArray(item)) {
    return [
      {
        field: at || '(body)',
        message:
          'must be an object {Method, Path, Query?, StatusCode?, Phase?, Uri?, User?, Headers?, Body?, ResponseHeaders?, ResponseBody?}',
      },
    ];
  }
  const o = item as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    if (!['Method', 'Path', 'Query', 'StatusCode', 'Phase', 'Uri', 'User', ...CONTENT_FIELDS].includes(k))
      errors.push({ field: f(k), message: 'is not a field of a served request' });
  }
  if (typeof o.Method !== 'string' || !METHOD.test(o.Method))
    errors.push({ field: f('Method'), message: 'is required: an HTTP method such as GET' });
  if (typeof o.Path !== 'string' || !o.Path.startsWith('/') || o.Path.length > 8192) {
    errors.push({ field: f('Path'), message: 'is required: a path starting with /' });
  }
  if (o.Query !== undefined && typeof o.Query !== 'string')
    errors.push({ field: f('Query'), message: 'must be a string (without the leading ?)' });
  if (
    o.StatusCode !== undefined &&
    (!Number.isInteger(o.StatusCode) || (o.StatusCode as number) < 100 || (o.StatusCode as number) > 599)
  ) {
    errors.push({ field: f('StatusCode'), message: 'must be an HTTP status code from 100 to 599' });
  }
  if (o.Phase !== undefined && !['before', 'after', 'both'].includes(o.Phase as string)) {
    errors.push({ field: f('Phase'), message: 'must be before, after or both' });
  }
  if ((o.Phase === 'after' || o.Phase === 'both') && o.StatusCode === undefined) {
    errors.push({ field: f('StatusCode'), message: `is required when Phase is ${o.Phase}` });
  }
  if (o.Uri !== undefined && (typeof o.Uri !== 'string' || !URL.canParse(o.Uri)))
    errors.push({ field: f('Uri'), message: 'must be an absolute URI' });
  if (o.User !== undefined && (typeof o.User !== 'string' || !isValidUserName(o.User)))
    errors.push({ field: f('User'), message: `must be a user name: ${USER_NAME_RULE}` });
  errors.push(...contentErrors(o, f));
  return errors.length ? errors : (o as unknown as ServedRequest);
}

import { Command, InvalidArgumentError } from 'commander';
import { withoutPassword } from '../../../util/index.js';
import type { MatchView } from '../../api-views.js';
import { type ContextFactory, examples, intArg } from '../../command.js';
import type { CliContext } from '../../context.js';
import { UsageError } from '../../exit-codes.js';
import { readInput } from '../../json-file.js';
import type { Column } from '../../output.js';
import { typeName } from '../hooks/hook-columns.js';

export interface MatchOptions {
  method: string;
  path: string;
  status?: number;
  /** Who made the request (the API's `User`); absent: anonymous. */
  user?: string;
  /** `--header 'Name: value'`, repeatable: the request's headers, for Filters and Transforms. */
  headers?: string[];
  /** `--body FILE|-`: the request body. */
  body?: string;
  responseHeaders?: string[];
  /** `--response-body FILE`: the response body (with --status). */
  responseBody?: string;
}

const USAGE = 'hookctl match METHOD PATH [--status N] [--header "Name: value"]… [--body FILE|-]';

function headerArg(v: string, previous: string[] = []): string[] {
  const colon = v.indexOf(':');
  if (colon <= 0) throw new InvalidArgumentError('give a header as "Name: value".');
  return [...previous, v];
}

function headerObject(list: string[] | undefined): Record<string, string> | undefined {
  if (list === undefined) return undefined;
  const out: Record<string, string> = {};
  for (const h of list) {
    const colon = h.indexOf(':');
    const name = h.slice(0, colon).trim();
    out[name] = name in out ? `${out[name]}, ${h.slice(colon + 1).trim()}` : h.slice(colon + 1).trim();
  }
  return out;
}

/**
 * A body file as the API takes it: with a content type the text as it is (the server parses it
 * as JSON when the type says so); without one, JSON text is sent as the JSON value it holds.
 */
async function bodyOf(
  file: string,
  headers: Record<string, string> | undefined,
  ctx: CliContext,
): Promise<unknown> {
  const { text } = await readInput(file, ctx.io, USAGE);
  const typed = Object.keys(headers ?? {}).some((k) => k.toLowerCase() === 'content-type');
  if (typed) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function filterText(m: MatchView): string {
  const f = m.Filter as { Matched: boolean; Error: string | null } | undefined;
  if (f === undefined) return '';
  if (f.Matched) return 'matched';
  return f.Error ? `error: ${f.Error}` : 'no match';
}

function transformText(m: MatchView): string {
  const t = m.Transform as { Skip: boolean; Error: string | null; Payload: string | null } | undefined;
  if (t === undefined) return '';
  if (t.Error) return t.Error;
  if (t.Skip) return 'skip';
  return t.Payload === null ? 'unchanged' : 'payload';
}

const METHOD = /^(?:[!#$%&'*+.^_`|~0-9A-Za-z-]+)$/;

/**
 * For which response statuses the hook fires: `any`, `any but 401`, `only 200,204`; `before the
 * answer` for BeforeCompletion. `(needs --status)` when no status was given and the lists decide.
 */
export function statusesOf(m: MatchView): string {
  if (m.Type === 0) return 'any (before the answer)';
  const white = m.StatusCodeWhiteList ?? [];
  const black = m.StatusCodeBlackList ?? [];
  let text = 'any';
  if (white.length) text = `only ${white.join(',')}`;
  if (black.length) text += `${white.length ? ', not' : ' but'} ${black.join(',')}`;
  return m.NeedsStatus ? `${text} (needs --status)` : text;
}

function columns(wide: boolean): Column<MatchView>[] {
  const cols: Column<MatchView>[] = [
    { header: 'HOOK', value: (m) => m.HookId, paint: (t, _m, c) => c.cyan(t) },
    { header: 'TYPE', value: (m) => typeName(m.Type) },
    {
      header: 'STATUSES',
      value: statusesOf,
      paint: (t, m, c) => (m.NeedsStatus ? c.yellow(t) : t),
    },
    { header: 'CAPTURES', value: (m) => (m.Captures ?? []).join(',') },
    { header: 'FILTER', value: filterText, paint: (t, _m, c) => (t.startsWith('error') ? c.red(t) : t) },
    { header: 'TRANSFORM', value: transformText, shrink: true },
    {
      header: 'CALLBACK',
      // A table is seen over shoulders and pasted into tickets: no password in it (-o json keeps the URL).
      value: (m) => `${m.Request?.Method ?? ''} ${withoutPassword(m.Request?.Url ?? '')}`.trim(),
      shrink: true,
    },
  ];
  const payload = (m: MatchView) => (m.Transform as { Payload?: string | null } | undefined)?.Payload;
  if (wide) cols.push({ header: 'BODY', value: (m) => payload(m) ?? m.Request?.Body ?? '', shrink: true });
  return cols;
}

/**
 * Asks the server which of your hooks a request would fire, and the callbacks it would send
 * (POST /match). Without --status, AfterCompletion hooks whose status lists decide are listed
 * too, marked "needs --status", with the statuses they fire for.
 */
export async function runMatch(opts: MatchOptions, ctx: CliContext): Promise<void> {
  const out = ctx.output('table');
  const body = {
    Method: opts.method.toUpperCase(),
    Path: opts.path,
    ...(opts.status !== undefined && { StatusCode: opts.status }),
    ...(opts.user !== undefined && { User: opts.user }),
  } as Record<string, unknown> & { Method: string; Path: string };
  if (opts.body === '-' && opts.responseBody === '-')
    // Thrown as the run starts, after commander's parsing: a UsageError is what prints it.
    throw new UsageError('--body - and --response-body - cannot both read standard input', { usage: USAGE });
  const headers = headerObject(opts.headers);
  const responseHeaders = headerObject(opts.responseHeaders);
  if (headers !== undefined) body.Headers = headers;
  if (responseHeaders !== undefined) body.ResponseHeaders = responseHeaders;
  if (opts.body !== undefined) body.Body = await bodyOf(opts.body, headers, ctx);
  if (opts.responseBody !== undefined)
    body.ResponseBody = await bodyOf(opts.responseBody, responseHeaders, ctx);
  const matches = await (await ctx.client()).match(body);
  if (out.format === 'json') return out.json(matches);
  if (matches.length === 0) {
    if (out.isTTY) {
      const who = opts.user === undefined ? ' made anonymously' : ` made by ${opts.user}`;
      out.info(
        `no hook would fire for ${body.Method} ${body.Path}${opts.status ? ` [${opts.status}]` : ''}${who}`,
      );
      // The "own" scope (hooks that observe only their owner's own requests) is the usual reason
      // a hook that fires in real traffic does not fire in an anonymous dry run.
      if (opts.user === undefined)
        out.info(
          'a hook whose owner has the scope "own" fires only for requests its owner makes; say who makes the request with --user NAME',
        );
    }
    return;
  }
  out.table(columns(out.format === 'wide'), matches);
  const undecided = matches.filter((m) => m.NeedsStatus).length;
  if (undecided > 0 && out.isTTY) {
    out.info(
      `${undecided === matches.length ? 'these fire' : `${undecided} of these fire${undecided === 1 ? 's' : ''}`} only for some response statuses (STATUSES); give one with --status to know`,
    );
  }
}

/** `hookctl match METHOD PATH [--status N]`. */
export function newMatchCommand(context: ContextFactory, run = runMatch): Command {
  return new Command('match')
    .description('dry run: which hooks a request would fire, and their callbacks (nothing is sent)')
    .argument('<method>', 'the request method, e.g. GET', (v: string) => {
      if (!METHOD.test(v)) throw new InvalidArgumentError('not an HTTP method token such as GET.');
      return v;
    })
    .argument('<path>', 'the request path, optionally with a query string', (v: string) => {
      if (!v.startsWith('/')) throw new InvalidArgumentError('the path must start with /.');
      return v;
    })
    .option(
      '--status <code>',
      'the response status (judges AfterCompletion status lists; without it, hooks that depend on it are marked "needs --status")',
      intArg('--status', 100, 599),
    )
    .option(
      '--user <name>',
      'who makes the request (default: anonymous); hooks of owners with the scope "own" fire only for their own requests',
    )
    .option(
      '--header <line>',
      'a request header, "Name: value" (repeatable); Filters read request.headers',
      headerArg,
    )
    .option(
      '--body <file>',
      'the request body from FILE (- for standard input); JSON unless a --header gives another content-type',
    )
    .option(
      '--response-header <line>',
      'a response header, "Name: value" (repeatable), with --status',
      headerArg,
    )
    .option('--response-body <file>', 'the response body from FILE, with --status')
    .addHelpText(
      'after',
      examples([
        'hookctl match GET /repositories/r1/timeseries/ts1',
        "hookctl match POST '/repositories/r1/timeseries/ts1/data?unit=kWh' --header 'Content-Type: application/json' --body write.json",
        'hookctl match PUT /repositories/r1/data --status 200 --response-body answer.json -o json',
        'hookctl match GET /repositories/alice/items/1 --user alice',
        'hookctl match GET /repositories/r1/timeseries/ts1 --status 401',
        'hookctl match PUT /repositories/r1/timeseries/ts1/data --status 204 -o json',
      ]),
    )
    .action(
      async (
        method: string,
        path: string,
        o: {
          status?: number;
          user?: string;
          header?: string[];
          body?: string;
          responseHeader?: string[];
          responseBody?: string;
        },
        cmd: Command,
      ) =>
        run(
          {
            method,
            path,
            ...(o.status !== undefined && { status: o.status }),
            ...(o.user !== undefined && { user: o.user }),
            ...(o.header !== undefined && { headers: o.header }),
            ...(o.body !== undefined && { body: o.body }),
            ...(o.responseHeader !== undefined && { responseHeaders: o.responseHeader }),
            ...(o.responseBody !== undefined && { responseBody: o.responseBody }),
          },
          context(cmd),
        ),
    );
}

import { Command, InvalidArgumentError } from 'commander';
import { withoutPassword } from '../../../util/index.js';
import type { MatchView } from '../../api-views.js';
import { type ContextFactory, examples, intArg } from '../../command.js';
import type { CliContext } from '../../context.js';
import type { Column } from '../../output.js';
import { typeName } from '../hooks/hook-columns.js';

export interface MatchOptions {
  method: string;
  path: string;
  status?: number;
  /** Who made the request (the API's `User`); absent: anonymous. */
  user?: string;
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
    {
      header: 'CALLBACK',
      // A table is seen over shoulders and pasted into tickets: no password in it (-o json keeps the URL).
      value: (m) => `${m.Request?.Method ?? ''} ${withoutPassword(m.Request?.Url ?? '')}`.trim(),
      shrink: true,
    },
  ];
  if (wide) cols.push({ header: 'BODY', value: (m) => m.Request?.Body ?? '', shrink: true });
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
  };
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
    .addHelpText(
      'after',
      examples([
        'hookctl match GET /repositories/r1/timeseries/ts1',
        'hookctl match GET /repositories/alice/items/1 --user alice',
        'hookctl match GET /repositories/r1/timeseries/ts1 --status 401',
        'hookctl match PUT /repositories/r1/timeseries/ts1/data --status 204 -o json',
      ]),
    )
    .action(async (method: string, path: string, o: { status?: number; user?: string }, cmd: Command) =>
      run(
        {
          method,
          path,
          ...(o.status !== undefined && { status: o.status }),
          ...(o.user !== undefined && { user: o.user }),
        },
        context(cmd),
      ),
    );
}

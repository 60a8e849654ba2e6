import { Command } from 'commander';
import { ApiClient } from '../../api-client.js';
import { type ContextFactory, examples } from '../../command.js';
import { type CliContext, DEFAULT_SERVER, normalizeServer } from '../../context.js';
import { AuthError, UsageError } from '../../exit-codes.js';
import { checkProfileName, DEFAULT_PROFILE } from '../../profiles.js';
import { readSecret } from '../../secret-input.js';

export type LoginOptions = Record<string, never>;

/** Which profile `login` writes: the one named, else the current one for this server, else `default`. */
async function profileFor(ctx: CliContext, server: string | undefined): Promise<string> {
  const named = ctx.globals.profile ?? (ctx.env.HOOKCTL_PROFILE || undefined);
  if (named !== undefined) return named;
  const profiles = await ctx.profiles();
  const current = profiles.current();
  const profile = current === undefined ? undefined : profiles.get(current);
  if (current !== undefined && profile && (server === undefined || profile.server === server)) return current;
  return DEFAULT_PROFILE;
}

/**
 * Saves a server and token as a profile (0600 file). The token comes from standard input, is
 * checked with GET /hooktypes first, and nothing is saved when the server refuses it (exit 4).
 */
export async function runLogin(_opts: LoginOptions, ctx: CliContext): Promise<void> {
  const out = ctx.output('table');
  const given =
    ctx.globals.server !== undefined
      ? normalizeServer(ctx.globals.server, '--server')
      : ctx.env.HOOKD_URL
        ? normalizeServer(ctx.env.HOOKD_URL, 'HOOKD_URL')
        : undefined;
  const name = await profileFor(ctx, given);
  checkProfileName(name);
  const profiles = await ctx.profiles();
  const server = given ?? profiles.get(name)?.server ?? DEFAULT_SERVER;

  const token = await readSecret(ctx.io, `API token for ${server} (input is hidden): `);
  if (token === '') {
    throw new UsageError('no token given on standard input', {
      hint: 'pipe it in (hookctl login < token-file) or type it at the prompt; create one with: hookd token create USER',
    });
  }
  if (/\s/.test(token))
    throw new UsageError('the token contains white space; paste exactly what hookd token create printed');

  const client = new ApiClient({
    server,
    token,
    tokenSource: 'standard input',
    ...(ctx.globals.debug && { debug: (line: string) => ctx.debug(line) }),
    ...(ctx.deps.dispatcher !== undefined && { dispatcher: ctx.deps.dispatcher }),
  });
  try {
    await client.hookTypes();
  } catch (e) {
    if (e instanceof AuthError) {
      throw new AuthError(
        `${server} refused the token; nothing was saved`,
        'check that the token is complete and for this server; an admin creates one with: hookd token create USER',
      );
    }
    throw e;
  } finally {
    await client.close();
  }

  profiles.save(name, { server, token });
  if (out.format === 'json') return out.json({ Profile: name, Server: server, File: profiles.path });
  out.info(
    `${out.errColor.green('✓')} logged in to ${server}; saved as profile "${name}" in ${profiles.path}`,
  );
}

/** `hookctl login` (token on standard input). */
export function newLoginCommand(context: ContextFactory, run = runLogin): Command {
  return new Command('login')
    .description('save a server and API token as a profile (the token is read from standard input)')
    .addHelpText(
      'after',
      `${examples([
        'hookctl login --server https://hooks.example.com          # prompts for the token',
        'hookd token create alice | hookctl login --server http://127.0.0.1:8470',
        'hookctl login --profile staging --server https://staging.example.com < token.txt',
      ])}
The token is never taken from the command line: it would end up in shell history and in ps.
It is checked against the server (GET /hooktypes) before anything is saved.
`,
    )
    .action(async (_o: unknown, cmd: Command) => run({}, context(cmd)));
}

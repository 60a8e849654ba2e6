import { Command } from 'commander';
import type { PortalLinkRequest } from '../../../client/index.js';
import { type ContextFactory, collect, examples } from '../../command.js';
import type { CliContext } from '../../context.js';

export interface PortalLinkOptions {
  user: string;
  /** A duration such as 15m or 2h; absent: the daemon's default (15 minutes). */
  ttl?: string;
  /** Portal scopes (hooks:write, secrets, test, redeliver, live); empty: all of them. */
  scopes: string[];
  readOnly?: boolean;
}

/**
 * Makes a one-time portal link for a user (POST /_hookd/portal-links, admin or the `portal`
 * permission) and prints its URL; when it expires goes to stderr, so the URL alone can be piped.
 */
export async function runPortalLink(opts: PortalLinkOptions, ctx: CliContext): Promise<void> {
  const out = ctx.output('table');
  const client = await ctx.client();
  const scopes = opts.scopes
    .flatMap((s) => s.split(','))
    .map((s) => s.trim())
    .filter(Boolean);
  const link = await client.portalLink({
    User: opts.user,
    ...(opts.ttl !== undefined && { Ttl: opts.ttl }),
    // The server names a scope it does not know, with the closest one.
    ...(scopes.length > 0 && { Scopes: scopes as NonNullable<PortalLinkRequest['Scopes']> }),
    ...(opts.readOnly && { ReadOnly: true }),
  });
  if (out.format === 'json') return out.json(link);
  out.out.write(`${link.Url}\n`);
  out.info(
    `a one-time portal link for ${link.User}${link.ReadOnly ? ' (read-only)' : ''}; open it once before ${link.ExpiresAt}`,
  );
}

/** `hookctl portal-link USER [--ttl D] [--scope S]... [--read-only]`. */
export function newPortalLinkCommand(context: ContextFactory, run = runPortalLink): Command {
  return new Command('portal-link')
    .description(
      "print a one-time link that signs a browser in to the embeddable portal as USER (admin or the 'portal' permission)",
    )
    .argument('<user>', 'the user the portal signs in as')
    .option('--ttl <duration>', 'how long the link may be opened: 15m (default), 2h, at most 24h')
    .option(
      '--scope <scope>',
      'what the session may do beyond reading: hooks:write, secrets, test, redeliver, live (repeatable; default all)',
      collect,
    )
    .option('--read-only', 'nothing can be changed in the session')
    .addHelpText(
      'after',
      `${examples([
        'hookctl portal-link alice',
        'hookctl portal-link alice --ttl 2h --read-only',
        'hookctl portal-link alice --scope live --scope secrets',
      ])}
The link works once: opening it (as an iframe does) signs the browser in and sends it to the
portal; a second open, or one after it expired, answers 410.
`,
    )
    .action(async (user: string, o: { ttl?: string; scope?: string[]; readOnly?: boolean }, cmd: Command) =>
      run(
        {
          user,
          scopes: o.scope ?? [],
          ...(o.ttl !== undefined && { ttl: o.ttl }),
          ...(o.readOnly && { readOnly: true }),
        },
        context(cmd),
      ),
    );
}

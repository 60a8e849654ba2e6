import { Command } from 'commander';
import { type ContextFactory, examples } from '../../command.js';
import type { CliContext } from '../../context.js';

export interface SecretOptions {
  id: string;
  /** Print the `v1a` public key (`whpk_…`) instead of the secret. */
  publicKey?: boolean;
}

/** Prints a hook's signing secret (`whsec_…`, GET /hooks/{id}/secret), created on first use. */
export async function runSecretGet(opts: SecretOptions, ctx: CliContext): Promise<void> {
  const out = ctx.output('table');
  const s = await (await ctx.client()).secret(opts.id);
  if (out.format === 'json') return out.json(s);
  out.out.write(`${opts.publicKey ? s.PublicKey : s.Secret}\n`);
}

/**
 * Replaces a hook's signing secret (POST /hooks/{id}/secret/rotate) and prints the new one; the
 * previous one keeps signing beside it until the time printed on stderr, so receivers can switch.
 */
export async function runSecretRotate(opts: SecretOptions, ctx: CliContext): Promise<void> {
  const out = ctx.output('table');
  const s = await (await ctx.client()).rotateSecret(opts.id);
  if (out.format === 'json') return out.json(s);
  out.out.write(`${s.Secret}\n`);
  out.info(
    `rotated the signing secret of ${opts.id}${s.PreviousValidUntil ? `; the previous one keeps signing too until ${s.PreviousValidUntil}` : ''}`,
  );
}

/** `hookctl secret get|rotate ID`. */
export function newSecretCommand(
  context: ContextFactory,
  run: { get: typeof runSecretGet; rotate: typeof runSecretRotate } = {
    get: runSecretGet,
    rotate: runSecretRotate,
  },
): Command {
  const cmd = new Command('secret')
    .description("read or rotate a hook's signing secret (receivers verify webhook-signature with it)")
    .addHelpText(
      'after',
      examples([
        'hookctl secret get hk_01jd3k…',
        'hookctl secret rotate hk_01jd3k…',
        "hookctl secret get hk_01jd3k… -o json | jq -r '.Secret'",
        'hookctl secret get --public-key hk_01jd3k…   # whpk_…, verifies v1a (ed25519) signatures',
      ]),
    );
  cmd.addCommand(
    new Command('get')
      .description("print the hook's signing secret (whsec_…), or with --public-key its v1a public key")
      .argument('<id>', 'the hook Id or Name')
      .option('--public-key', 'print the ed25519 public key (whpk_…) that v1a signatures verify with')
      .action(async (id: string, o: { publicKey?: boolean }, c: Command) =>
        run.get({ id, ...(o.publicKey && { publicKey: true }) }, context(c)),
      ),
  );
  cmd.addCommand(
    new Command('rotate')
      .description(
        'replace the signing secret and print the new one (the old one still signs for a grace period)',
      )
      .argument('<id>', 'the hook Id or Name')
      .action(async (id: string, _o: unknown, c: Command) => run.rotate({ id }, context(c))),
  );
  return cmd;
}

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError, Option } from 'commander';
import { withChoiceHint } from './choice-hint.js';
import { type ContextFactory, examples } from './command.js';
import { newApplyCommand } from './commands/apply/index.js';
import { newCompletionCommand } from './commands/completion/index.js';
import { newDeliveriesCommand } from './commands/deliveries/index.js';
import { newDiffCommand } from './commands/diff/index.js';
import { hookSubcommands, newHooksCommand } from './commands/hooks/index.js';
import { newListenCommand } from './commands/listen/index.js';
import { newLoginCommand } from './commands/login/index.js';
import { newMatchCommand } from './commands/match/index.js';
import { newNotificationsCommand } from './commands/notifications/index.js';
import { newPortalLinkCommand } from './commands/portal-link/index.js';
import { newProfileCommand } from './commands/profile/index.js';
import { newRedeliverCommand } from './commands/redeliver/index.js';
import { newReloadCommand } from './commands/reload/index.js';
import { newSecretCommand } from './commands/secret/index.js';
import { newTailCommand } from './commands/tail/index.js';
import { newTokensCommand } from './commands/tokens/index.js';
import { newTypesCommand } from './commands/types/index.js';
import { newUsersCommand } from './commands/users/index.js';
import { newValidateCommand } from './commands/validate/index.js';
import { CliContext, type CliDeps, type GlobalOptions } from './context.js';
import { CliError, EXIT, exitCodeOf, formatError, ReportedError } from './exit-codes.js';
import { colorLevel, FORMATS } from './output.js';

function version(): string {
  // dist/src/hookctl or src/hookctl: walk up to the package's own package.json.
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++, dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      try {
        const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
        if (pkg.name === 'hookd' && pkg.version) return pkg.version;
      } catch {
        // keep looking
      }
    }
  }
  return 'unknown';
}

/** The whole command tree. Commands get their context from `context` once commander has parsed. */
export function buildProgram(context: ContextFactory): Command {
  const program = new Command('hookctl')
    .description('hookctl: the command-line client of the hookd webhook daemon')
    .version(version(), '--version', 'print the version')
    .option(
      '--server <url>',
      'hookd API URL with its base path (default: HOOKD_URL, the profile, http://127.0.0.1:8470)',
    )
    .option('--profile <name>', 'use this saved profile (default: HOOKCTL_PROFILE, the current profile)')
    .addOption(new Option('-o, --output <format>', 'output format').choices(FORMATS))
    .option('--no-color', 'no colour (also NO_COLOR=1; colour is only ever used on a terminal)')
    .option('--debug', 'log requests to stderr and show stack traces')
    .configureHelp({ showGlobalOptions: true, sortSubcommands: false })
    .addHelpText(
      'after',
      `${examples([
        'hookctl list',
        'hookctl create -f hook.json',
        'hookctl edit hk_01jd3k…',
        'hookctl tail --status failed',
        'hookd token create alice | hookctl login --server https://hooks.example.com',
      ])}
Environment: HOOKD_URL, HOOKD_TOKEN, HOOKD_DATA_DIR, HOOKCTL_PROFILE, NO_COLOR, XDG_CONFIG_HOME.
Exit status: 0 success, 1 refused by the server, 2 usage or invalid JSON, 3 hookd unreachable,
4 authentication failed. See man hookctl.
`,
    );
  program.addCommand(newHooksCommand(context));
  for (const shortcut of hookSubcommands(context)) {
    shortcut.description(`${shortcut.description()} (= hooks ${shortcut.name()})`);
    program.addCommand(shortcut);
  }
  program
    .addCommand(newTypesCommand(context))
    .addCommand(newMatchCommand(context))
    .addCommand(newDeliveriesCommand(context))
    .addCommand(newRedeliverCommand(context))
    .addCommand(newSecretCommand(context))
    .addCommand(newTailCommand(context))
    .addCommand(newListenCommand(context))
    .addCommand(newApplyCommand(context))
    .addCommand(newDiffCommand(context))
    .addCommand(newNotificationsCommand(context))
    .addCommand(newValidateCommand(context))
    .addCommand(newReloadCommand(context))
    .addCommand(newLoginCommand(context))
    .addCommand(newProfileCommand(context))
    .addCommand(newUsersCommand(context))
    .addCommand(newTokensCommand(context))
    .addCommand(newPortalLinkCommand(context))
    .addCommand(newCompletionCommand(context));
  return program;
}

/** Every command in the tree, for settings commander does not pass down to added commands. */
function everyCommand(cmd: Command): Command[] {
  return [cmd, ...cmd.commands.flatMap(everyCommand)];
}

/**
 * Runs hookctl with `args` (without node and the script) and returns the exit code. All errors
 * end here and are mapped to exit codes in one place (exit-codes.ts); nothing calls process.exit.
 */
export async function runCli(args: string[], deps: CliDeps): Promise<number> {
  let ctx: CliContext | undefined;
  const context: ContextFactory = (cmd) => {
    const g = cmd.optsWithGlobals() as Record<string, unknown>;
    const globals: GlobalOptions = {
      ...(typeof g.server === 'string' && { server: g.server }),
      ...(typeof g.profile === 'string' && { profile: g.profile }),
      ...(typeof g.output === 'string' && { output: g.output as GlobalOptions['output'] }),
      color: g.color !== false,
      debug: g.debug === true,
    };
    ctx = new CliContext(deps, globals);
    return ctx;
  };
  const program = buildProgram(context);
  const noColor = args.includes('--no-color');
  const errLevel = colorLevel(deps.io.stderr, deps.env, !noColor);
  for (const cmd of everyCommand(program)) {
    cmd
      .exitOverride()
      .configureHelp({ showGlobalOptions: true, sortSubcommands: false })
      .showHelpAfterError(`(run ${cmd === program ? 'hookctl' : 'the command with'} --help for usage)`)
      .configureOutput({
        writeOut: (s) => deps.io.stdout.write(s),
        writeErr: (s) => deps.io.stderr.write(s),
        getOutHelpWidth: () => deps.io.stdout.columns ?? 80,
        getErrHelpWidth: () => deps.io.stderr.columns ?? 80,
        outputError: (s, write) =>
          write(
            errLevel > 0
              ? withChoiceHint(s).replace(/^error:/, '\u001b[31merror:\u001b[39m')
              : withChoiceHint(s),
          ),
      });
  }

  const debug = args.includes('--debug');
  // Bare `hookctl` is a request for help (as gh and kubectl answer it), not a usage error.
  if (args.length === 0) {
    program.outputHelp();
    return EXIT.OK;
  }
  try {
    await program.parseAsync(args, { from: 'user' });
    return EXIT.OK;
  } catch (e) {
    const code = exitCodeOf(e);
    // commander has printed its own message (or the help); a ReportedError was printed by its command.
    if (!(e instanceof CommanderError) && !(e instanceof ReportedError)) {
      const paint = errLevel > 0 ? (s: string) => `\u001b[31m${s}\u001b[39m` : undefined;
      let text = formatError(e, { debug, ...(paint && { paint }) });
      if (!(e instanceof CliError) && !debug) text += 'hint: run again with --debug for the stack trace\n';
      deps.io.stderr.write(text);
    }
    return code;
  } finally {
    await ctx?.close();
  }
}

/** The `hookctl` entry point (bin/hookctl.js). Sets the exit code; never exits mid-write. */
export async function main(argv: string[] = process.argv): Promise<void> {
  // `hookctl list | head -1` closes the pipe early: that is the reader's choice, not an error.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(EXIT.OK);
    throw err;
  });
  const code = await runCli(argv.slice(2), {
    io: { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr },
    env: process.env,
  });
  process.exitCode = code;
}

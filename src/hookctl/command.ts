import { type Command, InvalidArgumentError } from 'commander';
import type { CliContext } from './context.js';

/**
 * Builds the run's context from the command commander picked (global options are only known
 * after parsing). Every command folder exports `newXCommand(context, run = runX)`: options →
 * validate → `run(opts, ctx)`, with `run` replaceable in tests as gh's `runF`.
 */
export type ContextFactory = (cmd: Command) => CliContext;

/** `hookctl hooks create -f FILE`: the full usage line of a command, for usage errors. */
export function usageOf(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) names.unshift(c.name());
  return `${names.join(' ')} ${cmd.usage()}`.trim();
}

/** commander's collector for repeatable options. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** Parses an integer argument; commander reports a bad one as a usage error (exit 2). */
export function intArg(name: string, min: number, max: number): (value: string) => number {
  return (value: string) => {
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
      throw new InvalidArgumentError(`${name} must be a whole number from ${min} to ${max}.`);
    }
    return Number(value);
  };
}

/** Accepts an ISO 8601 timestamp (as the API's `since`/`until` expect); else a usage error. */
export function isoArg(name: string): (value: string) => string {
  return (value: string) => {
    if (
      !/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(value) ||
      Number.isNaN(Date.parse(value))
    ) {
      throw new InvalidArgumentError(
        `${name} must be an ISO 8601 date or time such as 2026-11-22T12:00:00Z.`,
      );
    }
    return value;
  };
}

/** Shared text of the `--help` epilogue: examples first, as gh does. */
export function examples(lines: string[]): string {
  return `\nExamples:\n${lines.map((l) => `  ${l}`).join('\n')}\n`;
}

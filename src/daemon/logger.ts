import pino, { type Logger } from 'pino';
import type PinoPretty from 'pino-pretty';
import type { HookdConfig } from '../config/index.js';
import { onDemand } from '../util/index.js';

/** Only a terminal (or `--log-format pretty`) needs it. */
const pretty = onDemand<typeof PinoPretty>('pino-pretty');

/**
 * JSON lines on stdout when it is not a terminal (journald keeps them; `journalctl -o cat` shows
 * them as written), pretty coloured lines on a terminal (`--log-format` chooses either way).
 * Tokens and secrets never reach the log: whole headers and fields that can carry them are
 * censored here, once, rather than trusted to every call site. Field names: LOG_FIELDS.
 */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'headers.Authorization',
  'authorization',
  'token',
  'secret',
  '*.token',
  '*.secret',
];

export interface LoggerOptions {
  /** `auto`: pretty when stdout is a terminal. */
  format?: HookdConfig['logFormat'];
  /** Where lines go (tests); default stdout. */
  destination?: pino.DestinationStream;
}

/** Whether lines are pretty-printed for `format` on this stdout. */
export function prettyLogs(format: HookdConfig['logFormat'] = 'auto', isTTY = process.stdout.isTTY === true) {
  return format === 'pretty' || (format === 'auto' && isTTY);
}

export function createLogger(
  level: HookdConfig['logLevel'],
  destinationOrOptions?: pino.DestinationStream | LoggerOptions,
): Logger {
  const opts: LoggerOptions =
    destinationOrOptions === undefined || 'write' in destinationOrOptions
      ? { ...(destinationOrOptions && { destination: destinationOrOptions }) }
      : destinationOrOptions;
  const destination =
    opts.destination ??
    (prettyLogs(opts.format)
      ? pretty()({
          colorize: process.stdout.isTTY === true && process.env.NO_COLOR === undefined,
          singleLine: true,
          ignore: 'service',
          translateTime: 'SYS:HH:MM:ss.l',
          sync: true,
        })
      : pino.destination({ fd: 1, sync: false }));
  return pino(
    {
      level,
      base: { service: 'hookd' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
}

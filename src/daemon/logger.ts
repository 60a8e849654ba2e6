import pino, { type Logger } from 'pino';
import type { HookdConfig } from '../config/config.js';

/**
 * JSON lines on stdout (journald keeps them; `journalctl -o cat` shows them as written). Tokens and
 * secrets never reach the log: whole headers and fields that can carry them are censored here,
 * once, rather than trusted to every call site.
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

export function createLogger(level: HookdConfig['logLevel'], destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'hookd' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
    },
    destination ?? pino.destination({ fd: 1, sync: false }),
  );
}

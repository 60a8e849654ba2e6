/** What the match engine is given: the switches, the reporters and the rules it asks. */
import type { Hook, UrlValueEscape } from '../hook/index.js';
import type { HookCodeOptions } from './hook-code.js';

export type Phase = 'before' | 'after';

export interface EngineOptions {
  /** The events switch: when it is off nothing fires. */
  enabled?: () => boolean;
  now?: () => Date;
  maxBodyBytes?: number;
  /** A stored hook whose pattern does not compile: it never fires (logged). */
  onStoredPatternError?: (hook: Hook, err: Error) => void;
  /** A hook whose callback could not be rendered (body over the size limit). */
  onRenderError?: (hook: Hook, err: Error) => void;
  /** Told how many hooks fired for a trigger (metrics). */
  onFired?: (phase: Phase, count: number) => void;
  /** The sink failed for callbacks fired after the request's user was resolved (logged). */
  onSinkError?: (err: Error) => void;
  /**
   * The scope rule (src/users/owner-scopes.ts): whether a hook's owner may observe a request on
   * this path. `in`/`out` are final; `own` means "only if the owner made the request". A promise
   * only when the owner's scopes are not cached yet. Absent: every owner sees everything.
   */
  scopes?: { verdict(owner: string, path: string): ScopeVerdict | Promise<ScopeVerdict> };
  /** Applied to `$REQUEST_URI` once per firing (`--redact-query-params`). */
  redactUri?: (uri: string) => string;
  /**
   * How template values are escaped in a Callback URL of this scheme (a broker's topic, subject,
   * routing key); undefined: the Callback goes out as written (HTTP). The daemon answers from
   * its transports, so that the engine knows none of them.
   */
  callbackEscape?: (callback: string) => UrlValueEscape | undefined;
  /** Filters and transforms (src/filter/, src/transform/): error reporting, sandbox limits. */
  code?: HookCodeOptions;
}

export type ScopeVerdict = 'in' | 'out' | 'own';

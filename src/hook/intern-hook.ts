/**
 * Sharing of the values that many hooks have in common. With 100,000 hooks in memory (the match
 * engine keeps every one) a hook's own copies of `["*"]`, `[]`, `{}` and `"application/json"`
 * cost about as much as its Id, PathPattern and Callback together (docs/BENCHMARKS.md "Size").
 *
 * Shared values are frozen, so code that tried to change one would throw instead of silently
 * changing every hook that shares it. Nothing changes a stored hook's lists or headers: the
 * service builds a new hook for every change, and callbacks copy the headers before adding any.
 */
import type { Hook } from './hook.js';

/** Bound of each table: these values are few in practice, and an unusual one is not worth keeping forever. */
const MAX_SHARED = 1024;

const EMPTY_LIST: readonly never[] = Object.freeze([]);
const EMPTY_HEADERS: Readonly<Record<string, string>> = Object.freeze({});
const strings = new Map<string, string>();
const lists = new Map<string, readonly (string | number)[]>();
/** The list each kind shared last. */
const lastShared = new Map<string, readonly (string | number)[]>();

/**
 * Callback URLs have a table of their own: many hooks post to one receiver, but the URLs are
 * many more than the owners and media types, and would crowd those out of one bounded table.
 */
const callbacks = new Map<string, string>();

function sharedString(s: string, table = strings): string {
  const shared = table.get(s);
  if (shared !== undefined) return shared;
  if (table.size < MAX_SHARED) table.set(s, s);
  return s;
}

function sameList(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * `kind` keeps the lists of different fields apart. The key is only a hint (a method token with
 * a space in it would collide with two tokens): the elements are compared before sharing.
 */
function sharedList<T extends string | number>(kind: string, list: T[]): T[] {
  if (!Array.isArray(list) || Object.isFrozen(list)) return list;
  if (list.length === 0) return EMPTY_LIST as never[];
  // Hooks loaded together mostly repeat the previous hook's list: no key to build for those.
  const last = lastShared.get(kind);
  if (last !== undefined && sameList(last, list)) return last as T[];
  const key = `${kind}${list.join(' ')}`;
  const shared = lists.get(key);
  if (shared !== undefined) return sameList(shared, list) ? remember(kind, shared as T[]) : list;
  if (lists.size >= MAX_SHARED) return list;
  const frozen = Object.freeze(list.slice());
  lists.set(key, frozen);
  return remember(kind, frozen as T[]);
}

function remember<T extends string | number>(kind: string, list: T[]): T[] {
  lastShared.set(kind, list);
  return list;
}

function isEmptyObject(o: unknown): boolean {
  if (typeof o !== 'object' || o === null) return false;
  for (const _ in o) return false;
  return true;
}

/**
 * Replaces, in place, the hook's lists, empty headers and common strings (owner, callback URL,
 * media type, method, state) with one shared, frozen instance of each value; returns the same hook.
 * The hook must be one that nobody changes afterwards, such as one kept by the match engine.
 */
export function internHook(hook: Hook): Hook {
  hook.Owner = sharedString(hook.Owner);
  hook.Callback = sharedString(hook.Callback, callbacks);
  hook.Methods = sharedList('M', hook.Methods);
  hook.StatusCodeBlackList = sharedList('S', hook.StatusCodeBlackList);
  hook.StatusCodeWhiteList = sharedList('S', hook.StatusCodeWhiteList);
  hook.CallbackMethod = sharedString(hook.CallbackMethod) as Hook['CallbackMethod'];
  hook.CallbackContentMediaType = sharedString(hook.CallbackContentMediaType);
  if (hook.Headers !== EMPTY_HEADERS && isEmptyObject(hook.Headers))
    hook.Headers = EMPTY_HEADERS as Record<string, string>;
  if (hook.RetrySchedule !== undefined) hook.RetrySchedule = sharedList('R', hook.RetrySchedule);
  hook.State = sharedString(hook.State) as Hook['State'];
  return hook;
}

/**
 * Store faults: a write (or read) the store refused for a reason of its own surroundings — a full
 * disk, a read-only file system, a database that is down or unreachable — as opposed to a bug.
 * They are answered 503 `STORE_UNAVAILABLE` with `Retry-After` (never 500 `INTERNAL`), turn
 * readiness off while they last, and delivery keeps what it fires meanwhile in a bounded buffer
 * (docs/DECISIONS.md "Store faults").
 */

// Node and libc: the file system or the network said no.
const SYSTEM_CODES = new Set([
  'ENOSPC',
  'EDQUOT',
  'EROFS',
  'EIO',
  'EACCES',
  'EPERM',
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

// SQLite (better-sqlite3's SqliteError.code): full, read-only, I/O, locked beyond the busy timeout.
const SQLITE_PREFIXES = [
  'SQLITE_FULL',
  'SQLITE_READONLY',
  'SQLITE_IOERR',
  'SQLITE_CANTOPEN',
  'SQLITE_BUSY',
  'SQLITE_PROTOCOL',
];

// PostgreSQL SQLSTATE classes and codes: connection exceptions, insufficient resources (disk
// full, out of memory, too many connections), operator intervention (shutdown, cannot connect
// now), a read-only transaction (a standby), system I/O errors.
const PG_CLASSES = ['08', '53', '57P', '58'];
const PG_CODES = new Set(['25006']);

// pg's own messages for a connection that broke or never came.
const PG_MESSAGES = [
  'Connection terminated',
  'connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error',
  'the database system is shutting down',
  'the database system is starting up',
  'terminating connection due to administrator command',
];

/** Whether an error is a store fault (see the module comment); walks `cause` a few levels. */
export function isStoreFault(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 4; depth++) {
    if ((e as { storeFault?: unknown }).storeFault === true) return true;
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') {
      if (SYSTEM_CODES.has(code)) return true;
      if (SQLITE_PREFIXES.some((p) => code.startsWith(p))) return true;
      if (/^[0-9A-Z]{5}$/.test(code) && (PG_CODES.has(code) || PG_CLASSES.some((c) => code.startsWith(c))))
        return true;
    }
    if (PG_MESSAGES.some((m) => e instanceof Error && e.message.includes(m))) return true;
    if (e.name === 'DatabaseUnavailableError') return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** A short description of a store fault for logs and the problem's detail (no credentials). */
export function describeStoreFault(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e.code === 'string' ? e.code : undefined;
  const message = typeof e.message === 'string' ? e.message.split('\n')[0]!.slice(0, 200) : String(err);
  if (code === undefined || message.includes(code)) return message;
  return `${code}: ${message}`;
}

/**
 * The store as the daemon uses it: every method's failure that is a store fault is marked
 * (`storeFault: true`), so that the API answers STORE_UNAVAILABLE for exactly the errors that came
 * from the store — a refused connection elsewhere (an identity provider, say) stays what it is.
 * Methods run on the store itself, not on the proxy. The capability objects a store hands out
 * (its `coordination`, a delivery store's `sharing`) are guarded the same way, since they too
 * talk to the store.
 */
export function guardStore<T extends object>(store: T): T {
  const mark = (err: unknown): never => {
    if (err instanceof Error && isStoreFault(err)) (err as { storeFault?: boolean }).storeFault = true;
    throw err;
  };
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key, target);
      if (typeof value !== 'function') {
        if (!CAPABILITIES.has(key) || typeof value !== 'object' || value === null) return value;
        let g = wrapped.get(key);
        if (g === undefined) {
          g = guardStore(value);
          wrapped.set(key, g);
        }
        return g;
      }
      let w = wrapped.get(key);
      if (w === undefined) {
        w = (...args: unknown[]) => {
          try {
            const r = (value as (...a: unknown[]) => unknown).apply(target, args);
            return r instanceof Promise ? r.catch(mark) : r;
          } catch (err) {
            return mark(err);
          }
        };
        wrapped.set(key, w);
      }
      return w;
    },
  });
}

const CAPABILITIES = new Set<PropertyKey>(['coordination', 'sharing']);

/** Whether an error was marked by `guardStore` as a store fault. */
export function fromStore(err: unknown): boolean {
  return err instanceof Error && (err as { storeFault?: unknown }).storeFault === true;
}

/**
 * Storage of `Idempotency-Key`s of `POST /_hookd/report`: per user and key, a fingerprint of the
 * request and, once answered, the answer to replay. The memory, SQLite and PostgreSQL stores
 * pass the same contract suite (test/idempotency/idempotency-store.test.ts). Times are epoch ms.
 */

/** The first answer to a request, replayed for its repeats. */
export interface StoredAnswer {
  status: number;
  contentType: string;
  body: string;
}

/** What `claim` found. */
export type Claim =
  /** The key is this request's now: run it, then `complete` (or `release` when it failed inside hookd). */
  | { kind: 'claimed' }
  /** The key was answered for the same request: send that answer again, run nothing. */
  | { kind: 'replay'; answer: StoredAnswer }
  /** The key belongs to a different request (another body). */
  | { kind: 'mismatch' }
  /** The same request holds the key and has not been answered yet (a concurrent duplicate). */
  | { kind: 'in-progress' };

export interface ClaimRequest {
  owner: string;
  key: string;
  /** SHA-256 of the request (method, path, body), hex. */
  fingerprint: string;
  now: number;
  /** How long the key and its answer are kept. */
  ttlMs: number;
  /**
   * A claim never answered for this long is taken over (its instance died between claim and
   * answer): without this a crash would block the key until it expires.
   */
  staleMs: number;
}

export interface IdempotencyStore {
  readonly kind: string;
  /** Atomically: takes the key for this request, or says what holds it. */
  claim(req: ClaimRequest): Promise<Claim>;
  /** Stores the answer of a claimed key. */
  complete(owner: string, key: string, fingerprint: string, answer: StoredAnswer): Promise<void>;
  /** Gives a claimed key up (the request failed inside hookd, so a retry should run it again). */
  release(owner: string, key: string, fingerprint: string): Promise<void>;
  /** Removes up to `limit` expired keys; returns how many. */
  prune(now: number, limit: number): Promise<number>;
}

/** A row as every store holds it. */
export interface KeyRow {
  fingerprint: string;
  /** Null while the claim is not answered yet. */
  status: number | null;
  contentType: string | null;
  body: string | null;
  created: number;
  expires: number;
}

/** What a claim finds in an existing row (shared by the stores, so they decide alike). */
export function judge(row: KeyRow | undefined, req: ClaimRequest): Claim | undefined {
  if (row === undefined || row.expires <= req.now) return undefined;
  if (row.status === null && row.created < req.now - req.staleMs) return undefined;
  if (row.fingerprint !== req.fingerprint) return { kind: 'mismatch' };
  if (row.status === null) return { kind: 'in-progress' };
  return {
    kind: 'replay',
    answer: { status: row.status, contentType: row.contentType ?? 'application/json', body: row.body ?? '' },
  };
}

/** In process memory: for tests and an in-memory daemon. */
export class MemoryIdempotencyStore implements IdempotencyStore {
  readonly kind = 'memory';
  private readonly rows = new Map<string, KeyRow>();

  async claim(req: ClaimRequest): Promise<Claim> {
    const id = `${req.owner}\n${req.key}`;
    const found = judge(this.rows.get(id), req);
    if (found) return found;
    this.rows.set(id, {
      fingerprint: req.fingerprint,
      status: null,
      contentType: null,
      body: null,
      created: req.now,
      expires: req.now + req.ttlMs,
    });
    return { kind: 'claimed' };
  }

  async complete(owner: string, key: string, fingerprint: string, answer: StoredAnswer): Promise<void> {
    const row = this.rows.get(`${owner}\n${key}`);
    if (row === undefined || row.fingerprint !== fingerprint) return;
    row.status = answer.status;
    row.contentType = answer.contentType;
    row.body = answer.body;
  }

  async release(owner: string, key: string, fingerprint: string): Promise<void> {
    const id = `${owner}\n${key}`;
    const row = this.rows.get(id);
    if (row !== undefined && row.status === null && row.fingerprint === fingerprint) this.rows.delete(id);
  }

  async prune(now: number, limit: number): Promise<number> {
    let n = 0;
    for (const [id, row] of this.rows) {
      if (n >= limit) break;
      if (row.expires <= now) {
        this.rows.delete(id);
        n++;
      }
    }
    return n;
  }
}

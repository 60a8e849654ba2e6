/**
 * The mark on every request hookd sends itself (callbacks and notifications): an HMAC over what
 * the request is (method and request-target) and when it was sent, keyed by a secret that every
 * instance of a cluster reads from the shared store. The proxy of any instance that receives the
 * request back, under whatever host name or address, recognises it as hookd's own.
 *
 * A client cannot make one up (it lacks the key), and one copied from a callback it received is
 * good only for that same method and request-target within the window: a request hookd itself
 * would have sent, which by the rule that this mark serves fires nothing anyway.
 */
import { createHmac, createSecretKey, type KeyObject, randomBytes, timingSafeEqual } from 'node:crypto';
import type { DeliveryStore } from '../store/index.js';

/** The request header that carries the mark. */
export const MARKER_HEADER = 'hookd-loop';

export type LoopKind = 'callback' | 'notification';

/**
 * How far a mark's time may be from the receiver's clock, in seconds: a callback's attempt is
 * signed as it is sent, so this covers transit and the clocks of a cluster's instances.
 */
export const MARK_WINDOW_S = 60;

/**
 * The key's row in the store's signing-secret table: not a hook Id (Ids never contain `:`), so no
 * hook's deletion takes it along, and a shared store (PostgreSQL) hands every instance the same.
 */
export const MARK_KEY_ID = 'hookd:loop-marker';

const VERSION = 'v1';
const KIND_CODE: Record<LoopKind, string> = { callback: 'c', notification: 'n' };

// Distinct (kind, method, target) marks remembered per second.
const MAX_MARKS = 1024;

export class LoopMarker {
  /** The marks signed in the current second, by kind, method and target. */
  private readonly marks = new Map<string, string>();
  private second = -1;

  constructor(private readonly key: KeyObject) {}

  /** The marker key from the store, created by the first instance that asks. */
  static async open(store: Pick<DeliveryStore, 'getSecret' | 'sharing'>): Promise<LoopMarker> {
    const fresh = {
      hookId: MARK_KEY_ID,
      secret: randomBytes(32).toString('base64'),
      previous: null,
      previousValidUntil: null,
    };
    let record = await store.getSecret(MARK_KEY_ID);
    if (record === undefined) {
      record = await store.sharing.storeFirstSecret(fresh);
    }
    return new LoopMarker(createSecretKey(Buffer.from(record.secret, 'base64')));
  }

  /** The key as text, for the processes of one daemon (the proxy workers get it from the primary). */
  exportKey(): string {
    return this.key.export().toString('base64');
  }

  /** A marker from `exportKey()`'s text. */
  static fromKey(text: string): LoopMarker {
    return new LoopMarker(createSecretKey(Buffer.from(text, 'base64')));
  }

  /**
   * The header value for one request hookd is about to send. It depends only on the kind, the
   * method, the request-target and the second, so within a second every callback to one target
   * carries the same: it is signed once and remembered until the second changes, so a busy proxy signs once a second, not once a request.
   */
  mark(kind: LoopKind, method: string, target: string, nowMs: number = Date.now()): string {
    const second = Math.floor(nowMs / 1000);
    if (second !== this.second) {
      this.second = second;
      this.marks.clear();
    }
    const key = `${KIND_CODE[kind]}${method} ${target}`;
    let value = this.marks.get(key);
    if (value === undefined) {
      const head = `${VERSION}.${KIND_CODE[kind]}.${second}`;
      value = `${head}.${this.sign(head, method, target)}`;
      // Bounded: a second with more distinct targets than this signs the rest each time.
      if (this.marks.size < MAX_MARKS) this.marks.set(key, value);
    }
    return value;
  }

  /**
   * What a received mark says, if it is hookd's for exactly this method and request-target and
   * recent; undefined for anything else (absent, malformed, forged, stale, another request's).
   */
  verify(value: string, method: string, target: string, nowMs: number = Date.now()): LoopKind | undefined {
    const parts = value.trim().split('.');
    if (parts.length !== 4 || parts[0] !== VERSION) return undefined;
    const kind: LoopKind | undefined =
      parts[1] === 'c' ? 'callback' : parts[1] === 'n' ? 'notification' : undefined;
    const t = Number(parts[2]);
    if (kind === undefined || !/^\d{1,12}$/.test(parts[2]!)) return undefined;
    if (Math.abs(nowMs / 1000 - t) > MARK_WINDOW_S) return undefined;
    const expected = Buffer.from(this.sign(`${parts[0]}.${parts[1]}.${parts[2]}`, method, target));
    const given = Buffer.from(parts[3]!);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    return kind;
  }

  private sign(head: string, method: string, target: string): string {
    return createHmac('sha256', this.key)
      .update(`${head}.${method.toUpperCase()} ${target}`)
      .digest('base64url');
  }
}

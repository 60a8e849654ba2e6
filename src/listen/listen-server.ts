import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { WebSocket, WebSocketServer } from 'ws';
import type { Principal } from '../auth/index.js';
import { HookdError } from '../errors/index.js';
import type { Hook } from '../hook/index.js';
import { toProblem } from '../http-api/index.js';
import { type IdentityRequest, identityRequestOf } from '../identity/index.js';
import type { DeliveryRecord } from '../store/index.js';
import { onDemand } from '../util/index.js';
import type { ListenerAttemptStore } from './listener-attempts.js';
import { relayedCallback } from './relay.js';

const wsLibrary = onDemand<typeof import('ws')>('ws');

/** What the listen socket needs from the daemon; each a narrow view of an existing part. */
export interface ListenDeps {
  /** The API's authentication, as for the live tail. */
  auth: { authenticate(req: IdentityRequest): Promise<Principal> };
  eventsEnabled: () => boolean;
  log: Logger;
  /** The delivery pipeline's event bus: every fired callback, with its owner. */
  events: {
    on(
      kind: 'fired',
      listener: (m: { DeliveryId: string; HookId: string }, owner: string) => void,
    ): () => void;
  };
  /** The delivery as recorded (its rendered request) and the hook's signing secret. */
  deliveries: {
    get(id: string): Promise<DeliveryRecord | undefined>;
    secretFor(hookId: string, persist: boolean): Promise<string>;
  };
  hooks: {
    get(owner: string, idOrName: string): Promise<Hook>;
    find(id: string): Promise<Hook | undefined>;
  };
  attempts: ListenerAttemptStore;
  /**
   * In a cluster, the other instances' fired callbacks (the live tail's fan-out): a listener sees
   * every instance's callbacks, not only those of the instance it reached. `watching` asks the
   * others for an owner's events while a listener of that owner is connected here.
   */
  remote?: {
    onRemote(listener: (e: { owner: string; [field: string]: unknown }) => void): () => void;
    watching(owner: string, delta: 1 | -1): void;
  };
  /** Bytes a listener may have unsent before callbacks are skipped for it (default 4 MiB). */
  maxBufferedBytes?: number;
  heartbeatMs?: number;
}

interface Listener {
  id: string;
  owner: string;
  ws: WebSocket & { alive?: boolean };
  /** Hook Ids it asked for; empty: all of the owner's. */
  hooks: Set<string>;
  /** Callbacks sent and not answered yet: only those may be recorded as its attempts. */
  pending: Map<string, { hookId: string; time: number }>;
}

const MAX_PENDING = 1000;
const RESPONSE_LIMIT = 4096;

/**
 * `GET /_hookd/listen` (WebSocket): while a `hookctl listen` is connected, every callback
 * its user's hooks fire (or the hooks it named) is also relayed to it, signed as sent, and the
 * receiver's answer it reports back is recorded as that listener's attempt. hookd never connects
 * to the receiver, so the callback-target policy does not apply to it. Only a hook's owner may
 * listen to it: another user's hook Id is 403, admin included (docs/DECISIONS.md).
 */
export class ListenServer {
  /** Made at the first upgrade: a daemon nobody tails never loads the WebSocket library. */
  private server: WebSocketServer | undefined;
  private readonly byOwner = new Map<string, Set<Listener>>();
  private readonly heartbeat: NodeJS.Timeout;
  private readonly offFired: () => void;
  private readonly offRemote: (() => void) | undefined;

  constructor(private readonly deps: ListenDeps) {
    this.offFired = deps.events.on('fired', (m, owner) => this.fired(m.DeliveryId, m.HookId, owner, false));
    // Another instance's events never include this one's (the fan-out skips its sender), so
    // each callback reaches a listener once, from the instance that fired it.
    this.offRemote = deps.remote?.onRemote((e) => {
      if (e.kind === 'fired' && typeof e.DeliveryId === 'string' && typeof e.HookId === 'string')
        this.fired(e.DeliveryId, e.HookId, e.owner, true);
    });
    this.heartbeat = setInterval(() => {
      for (const set of this.byOwner.values())
        for (const l of set) {
          if (l.ws.alive === false) {
            l.ws.terminate();
            continue;
          }
          l.ws.alive = false;
          l.ws.ping();
        }
    }, deps.heartbeatMs ?? 15_000);
    this.heartbeat.unref();
  }

  private fired(deliveryId: string, hookId: string, owner: string, remote: boolean): void {
    const listeners = this.byOwner.get(owner);
    if (!listeners) return;
    const to = [...listeners].filter((l) => l.hooks.size === 0 || l.hooks.has(hookId));
    if (to.length > 0) void this.relay(deliveryId, hookId, to, remote);
  }

  private wss(): WebSocketServer {
    this.server ??= new (wsLibrary().WebSocketServer)({ noServer: true, maxPayload: 16_384 });
    return this.server;
  }

  get clients(): number {
    return this.server?.clients.size ?? 0;
  }

  /** Whether an API upgrade request is this endpoint's (the tail takes the others). */
  static handles(url: string | undefined): boolean {
    return new URL(url ?? '/', 'http://x').pathname.endsWith('/_hookd/listen');
  }

  readonly handleUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    this.upgrade(req, socket, head).catch((err: unknown) => {
      if (err instanceof HookdError) return refuse(socket, err);
      this.deps.log.warn({ err }, 'listen upgrade failed');
      socket.destroy();
    });
  };

  private async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    if (!this.deps.eventsEnabled()) {
      throw new HookdError(
        'EVENTS_DISABLED',
        'events are disabled on this hookd; start it without --no-events',
      );
    }
    if (url.searchParams.has('token') || url.searchParams.has('access_token')) {
      throw new HookdError(
        'BAD_REQUEST',
        'a token in the URL is refused (it leaks into logs): send Authorization: Bearer <token>',
      );
    }
    const principal = await this.deps.auth.authenticate(identityRequestOf(req));
    const hooks = new Set<string>();
    for (const ref of url.searchParams.getAll('hook')) hooks.add(await this.ownHook(principal.user, ref));
    this.wss().handleUpgrade(req, socket, head, (ws) => this.serve(ws, principal.user, hooks));
  }

  /** The Id of the caller's hook `ref` (Id or Name); another user's hook is 403, an unknown one 404. */
  private async ownHook(owner: string, ref: string): Promise<string> {
    const found = await this.deps.hooks.find(ref).catch(() => undefined);
    if (found && found.Owner !== owner) {
      throw new HookdError(
        'FORBIDDEN',
        `hook ${found.Id} belongs to another user: only a hook's owner can listen to its callbacks`,
      );
    }
    return (await this.deps.hooks.get(owner, ref)).Id;
  }

  private serve(ws: WebSocket, owner: string, hooks: Set<string>): void {
    const l: Listener = { id: `ls_${randomBytes(10).toString('hex')}`, owner, ws, hooks, pending: new Map() };
    l.ws.alive = true;
    ws.on('pong', () => {
      l.ws.alive = true;
    });
    const set = this.byOwner.get(owner) ?? new Set<Listener>();
    this.byOwner.set(owner, set);
    set.add(l);
    this.deps.remote?.watching(owner, 1);
    let gone = false;
    const off = () => {
      if (gone) return;
      gone = true;
      const s = this.byOwner.get(owner);
      s?.delete(l);
      if (s?.size === 0) this.byOwner.delete(owner);
      this.deps.remote?.watching(owner, -1);
    };
    ws.on('close', off);
    ws.on('error', off);
    ws.on('message', (data, isBinary) => {
      if (!isBinary) void this.answered(l, data.toString());
    });
    ws.send(JSON.stringify({ kind: 'ready', Listener: l.id, Hooks: [...hooks] }));
    this.deps.log.info({ listener: l.id, owner, hooks: [...hooks] }, 'listener connected');
  }

  private async relay(deliveryId: string, hookId: string, to: Listener[], remote: boolean): Promise<void> {
    try {
      const [d, hook] = await Promise.all([
        remote ? this.recorded(deliveryId) : this.deps.deliveries.get(deliveryId),
        this.deps.hooks.find(hookId),
      ]);
      if (!d || !hook) return;
      const secret = await this.deps.deliveries.secretFor(hook.Id, hook.Persist);
      const message = JSON.stringify(
        relayedCallback(d, secret, {
          ...(hook.Name !== undefined && { hookName: hook.Name }),
          ...(hook.Signature !== undefined && { schemes: hook.Signature.Schemes }),
        }),
      );
      const limit = this.deps.maxBufferedBytes ?? 4_194_304;
      const time = Date.now();
      for (const l of to) {
        if (l.ws.readyState !== l.ws.OPEN) continue;
        if (l.ws.bufferedAmount > limit) {
          this.deps.log.warn({ listener: l.id, deliveryId }, 'listener too slow: callback not relayed');
          continue;
        }
        if (l.pending.size >= MAX_PENDING) l.pending.delete(l.pending.keys().next().value as string);
        l.pending.set(deliveryId, { hookId, time });
        l.ws.send(message);
      }
    } catch (err) {
      this.deps.log.warn({ err, deliveryId }, 'relaying a callback to listeners failed');
    }
  }

  /**
   * Another instance's delivery, read from the shared store: its fired event can overtake the
   * commit of its record, so a missing one is asked for again, a few times within about 3 s.
   */
  private async recorded(deliveryId: string): Promise<DeliveryRecord | undefined> {
    for (let wait = 50; ; wait *= 2) {
      const d = await this.deps.deliveries.get(deliveryId);
      if (d !== undefined || wait > 1600) return d;
      await new Promise((resolve) => setTimeout(resolve, wait).unref());
    }
  }

  /** `{kind:"result", DeliveryId, StatusCode, LatencyMs, Error, ResponseBody}` from the CLI. */
  private async answered(l: Listener, text: string): Promise<void> {
    let m: Record<string, unknown>;
    try {
      m = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return;
    }
    if (m?.kind !== 'result' || typeof m.DeliveryId !== 'string') return;
    const sent = l.pending.get(m.DeliveryId);
    // Only what this listener was sent: a client cannot write attempts onto other deliveries.
    if (!sent) return;
    l.pending.delete(m.DeliveryId);
    const status =
      Number.isInteger(m.StatusCode) && (m.StatusCode as number) >= 100 && (m.StatusCode as number) <= 599
        ? (m.StatusCode as number)
        : null;
    const latency =
      typeof m.LatencyMs === 'number' && Number.isFinite(m.LatencyMs) && m.LatencyMs >= 0 ? m.LatencyMs : 0;
    try {
      await this.deps.attempts.record({
        deliveryId: m.DeliveryId,
        hookId: sent.hookId,
        listener: l.id,
        time: sent.time,
        statusCode: status,
        latencyMs: latency,
        error: typeof m.Error === 'string' ? m.Error.slice(0, 1000) : status === null ? 'no answer' : null,
        responseBody: typeof m.ResponseBody === 'string' ? m.ResponseBody.slice(0, RESPONSE_LIMIT) : null,
      });
    } catch (err) {
      this.deps.log.warn(
        { err, listener: l.id, deliveryId: m.DeliveryId },
        'recording a listener attempt failed',
      );
    }
  }

  private closing: Promise<void> | undefined;

  /**
   * Closes every listener with 1001 (going away), as on daemon shutdown; resolves once they are
   * gone. A listener that never answers the close frame keeps it pending until `terminate()`
   * (the drain deadline, src/daemon/drain.ts). Called twice, the same promise.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      clearInterval(this.heartbeat);
      this.offFired();
      this.offRemote?.();
      for (const ws of this.server?.clients ?? []) ws.close(1001, 'hookd is shutting down');
      await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    })();
    return this.closing;
  }

  /** Destroys every listener's connection at once, as TailServer.terminate() does the tail's. */
  terminate(): void {
    for (const ws of this.server?.clients ?? []) ws.terminate();
  }
}

function refuse(socket: Duplex, err: HookdError): void {
  const body = JSON.stringify(toProblem(err));
  socket.end(
    `HTTP/1.1 ${err.status} ${err.title}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

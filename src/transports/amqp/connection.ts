/**
 * One AMQP connection with its confirm channel. A channel error (a publish to an exchange that
 * does not exist) closes only the channel: the next publish opens a new one on the same
 * connection. Unroutable messages come back as `basic.return` before their confirm, and are
 * matched to their publish by message id.
 */
import { type ChannelModel, type ConfirmChannel, connect, type Message } from 'amqplib';
import { LinkFailure } from '../broker-link/index.js';
import type { AmqpTarget } from './url.js';

/** What became of one publish. */
export type PublishResult =
  | { readonly kind: 'confirmed' }
  | { readonly kind: 'returned'; readonly replyCode: number; readonly replyText: string }
  | { readonly kind: 'nacked' }
  /** The broker closed the channel over this publish, or one beside it (a 404, a 403…). */
  | { readonly kind: 'channel-error'; readonly code: number; readonly serverText: string }
  | { readonly kind: 'lost'; readonly cause: string }
  | { readonly kind: 'too-large'; readonly cause: string };

interface OpenChannel {
  readonly channel: ConfirmChannel;
  /** Message ids the broker returned as unroutable, waiting for their confirm. */
  readonly returned: Map<string, Message['fields'] & { replyCode?: number; replyText?: string }>;
  /** The server's reason when it closed the channel. */
  closeError: { code: number; serverText: string } | undefined;
}

const CLOSE_WAIT_MS = 2000;

/** The server's own words from an amqplib close error: `NOT_FOUND - no exchange 'x' in vhost '/'`. */
export function serverText(err: Error): string {
  const m = /with message "([^"]*)"/.exec(err.message);
  return m?.[1] ?? err.message;
}

export class AmqpConnection {
  #channel: Promise<OpenChannel> | undefined;
  /** Why the broker is holding publishes back (a resource alarm), if it is. */
  blocked: string | undefined;

  #ended = false;

  private constructor(
    private readonly model: ChannelModel,
    private readonly lost: (cause: string) => void,
  ) {}

  /** Opens a connection to `address` for `target`'s credentials and vhost. */
  static async open(
    target: AmqpTarget,
    address: string,
    connectTimeoutMs: number,
    lost: (cause: string) => void,
  ): Promise<AmqpConnection> {
    const model = await connect(
      {
        protocol: target.tls ? 'amqps' : 'amqp',
        hostname: address,
        port: target.port,
        username: target.username,
        password: target.password,
        vhost: encodeURIComponent(target.vhost),
        heartbeat: 30,
      },
      { timeout: connectTimeoutMs, ...(target.tls ? { servername: target.host } : {}) },
    );
    const conn = new AmqpConnection(model, lost);
    model.on('error', (err: Error) => conn.#tell(serverText(err)));
    model.on('close', (err?: Error) => conn.#tell(err ? serverText(err) : 'closed by the broker'));
    model.on('blocked', (reason: string) => {
      conn.blocked = reason;
    });
    model.on('unblocked', () => {
      conn.blocked = undefined;
    });
    return conn;
  }

  /** Tells the link once that the connection is gone, unless `close()` ended it. */
  #tell(cause: string): void {
    if (this.#ended) return;
    this.#ended = true;
    this.lost(cause);
  }

  /** Closes the connection without telling the link it was lost. */
  async close(): Promise<void> {
    this.#ended = true;
    // A connection whose socket died unnoticed would wait for a close-ok that never comes.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.model.close(),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, CLOSE_WAIT_MS);
      }),
    ]).finally(() => clearTimeout(timer));
  }

  /** Publishes one message and waits for the broker's confirm (or return, nack, channel error). */
  async publish(
    exchange: string,
    routingKey: string,
    content: Buffer,
    options: { messageId: string; contentType?: string; timestamp: number; headers: Record<string, string> },
  ): Promise<PublishResult> {
    let open: OpenChannel;
    try {
      open = await this.#openChannel();
    } catch (err) {
      return { kind: 'lost', cause: err instanceof Error ? serverText(err) : String(err) };
    }
    return new Promise<PublishResult>((resolve) => {
      try {
        open.channel.publish(
          exchange,
          routingKey,
          content,
          { ...options, persistent: true, mandatory: true },
          (err: unknown) => {
            const returned = open.returned.get(options.messageId);
            if (returned) open.returned.delete(options.messageId);
            if (err === null || err === undefined) {
              resolve(
                returned
                  ? {
                      kind: 'returned',
                      replyCode: returned.replyCode ?? 312,
                      replyText: returned.replyText ?? 'NO_ROUTE',
                    }
                  : { kind: 'confirmed' },
              );
            } else if (open.closeError) {
              resolve({ kind: 'channel-error', ...open.closeError });
            } else if (err instanceof Error && err.message === 'message nacked') {
              resolve({ kind: 'nacked' });
            } else {
              resolve({ kind: 'lost', cause: 'the channel closed before the broker confirmed the message' });
            }
          },
        );
      } catch (err) {
        if (err instanceof RangeError) {
          // amqplib refuses a header table over its 64 KiB encoding buffer before sending.
          resolve({ kind: 'too-large', cause: err.message });
          return;
        }
        // The channel closed between opening and publishing.
        this.#channel = undefined;
        resolve(
          open.closeError
            ? { kind: 'channel-error', ...open.closeError }
            : { kind: 'lost', cause: err instanceof Error ? err.message : String(err) },
        );
      }
    });
  }

  #openChannel(): Promise<OpenChannel> {
    if (this.#channel) return this.#channel;
    const opening = this.model.createConfirmChannel().then((channel) => {
      const open: OpenChannel = { channel, returned: new Map(), closeError: undefined };
      channel.on('error', (err: Error & { code?: number }) => {
        open.closeError = { code: typeof err.code === 'number' ? err.code : 0, serverText: serverText(err) };
      });
      channel.on('close', () => {
        if (this.#channel === opening) this.#channel = undefined;
      });
      channel.on('return', (msg: Message) => {
        const id = msg.properties.messageId;
        if (typeof id === 'string') open.returned.set(id, msg.fields);
      });
      return open;
    });
    opening.catch(() => {
      if (this.#channel === opening) this.#channel = undefined;
    });
    this.#channel = opening;
    return opening;
  }
}

/** Names a connect error: a broker that answered no is `refused`; anything else `unreachable`. */
export function classifyConnectError(err: unknown, target: AmqpTarget): LinkFailure {
  const message = err instanceof Error ? err.message : String(err);
  if (/ACCESS[-_]REFUSED/.test(message)) {
    return new LinkFailure(
      'refused',
      `login refused by ${target.label} for user ${target.username} (403 ACCESS_REFUSED)`,
    );
  }
  if (/NOT[-_]ALLOWED|Expected ConnectionOpenOk; got <ConnectionClose/.test(message)) {
    return new LinkFailure(
      'refused',
      `${target.label} refused vhost ${target.vhost} for user ${target.username}: it does not exist or the user may not use it (530 NOT_ALLOWED)`,
    );
  }
  const code = (err as NodeJS.ErrnoException).code;
  return new LinkFailure(
    'unreachable',
    `cannot connect to ${target.label}${code ? ` (${code})` : `: ${message}`}`,
  );
}

/**
 * Upgrade requests at the edge: no byte of the client's goes to the upstream as a raw
 * tunnel until the upstream has agreed to switch protocols. Before, hookd piped the connection
 * as soon as it saw `Upgrade:`, and an upstream that answered an ordinary 200 then received every
 * later request on that connection unparsed: no header treatment, no hooks (request smuggling).
 *
 * The rules (docs/DECISIONS.md "Edge safety: upgrades, headers, loops"):
 * - `Upgrade: h2c`, and any Upgrade request that carries a body, is served as a plain HTTP/1.1
 *   request: the Upgrade header (and HTTP2-Settings) removed, the request handed back to the HTTP
 *   server, which parses it and everything after it on the connection as usual.
 * - Otherwise the request is forwarded; the client's further bytes wait. On `101` the two
 *   connections become a tunnel. On any other answer the response is relayed as an ordinary one
 *   and the connection goes back to the HTTP server, which parses what follows as HTTP/1.1 (each
 *   request with hookd's header treatment and hooks), as nginx does.
 */
import { type ClientRequest, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { setsOwnCookie } from './header-hygiene.js';
import { HOP_BY_HOP } from './hop-by-hop.js';

export interface UpgradeGateOptions {
  origin: URL;
  /** The upstream URL's path, without a trailing slash, put before every request's path. */
  prefix: string;
  /** How long the upstream has to answer the upgrade request. */
  timeoutMs: number;
  log: Logger;
}

/** A WebSocket close frame, status 1001 (going away): what a client is told at the drain deadline. */
const GOING_AWAY_FRAME = Buffer.from([0x88, 0x02, 0x03, 0xe9]);

export class UpgradeGate {
  // Established tunnels: detached from the HTTP server, they would otherwise outlive a shutdown.
  private readonly tunnels = new Set<{ socket: Duplex; upstream: Duplex; websocket: boolean }>();

  constructor(private readonly opts: UpgradeGateOptions) {}

  /**
   * Ends every open tunnel (the drain deadline has passed; nginx's `worker_shutdown_timeout`): a
   * WebSocket client gets a close frame (1001, going away) first, then both sockets go.
   */
  closeTunnels(): void {
    for (const { socket, upstream, websocket } of this.tunnels) {
      upstream.unpipe(socket);
      upstream.destroy();
      if (websocket && socket.writable) socket.end(GOING_AWAY_FRAME);
      // A client that stopped reading never lets the frame out: it does not get to wait for it.
      setTimeout(() => socket.destroy(), 100).unref();
    }
    this.tunnels.clear();
  }

  /**
   * Serves an h2c upgrade, or an Upgrade request with a body, as plain HTTP/1.1: the request is
   * written back, without its Upgrade, in front of the connection's unread bytes, and the
   * connection handed to the HTTP server again (Node: "this event can also be explicitly emitted
   * by users to inject connections into the HTTP server"). True when it did so.
   */
  downgrade(req: IncomingMessage, socket: Duplex, head: Buffer, server: Server): boolean {
    const upgrade = req.headers.upgrade ?? '';
    const te = req.headers['transfer-encoding'];
    const length = req.headers['content-length'];
    const body = te !== undefined || (length !== undefined && length !== '0');
    if (!body && !tokens(upgrade).has('h2c')) return false;
    // Node 26 parses an Upgrade request's body into `req` (de-chunked) rather than leaving it in
    // `head`: then it is sent on with a Content-Length of its own (Node 24 leaves `req` empty).
    const parsed = body && (req.readableLength > 0 || !req.complete);
    if (parsed) {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.once('end', () => this.reinjectWith(req, socket, Buffer.concat(chunks), head, server));
      return true;
    }
    this.reinjectWith(req, socket, undefined, head, server);
    return true;
  }

  /** The request again, without its Upgrade, then its body (when Node parsed it out), then `head`. */
  private reinjectWith(
    req: IncomingMessage,
    socket: Duplex,
    parsedBody: Buffer | undefined,
    head: Buffer,
    server: Server,
  ): void {
    const lines = [`${req.method} ${req.url} HTTP/${req.httpVersion}`];
    const raw = req.rawHeaders;
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i]!.toLowerCase();
      let value = raw[i + 1]!;
      if (name === 'upgrade' || name === 'http2-settings') continue;
      if (parsedBody !== undefined && (name === 'content-length' || name === 'transfer-encoding')) continue;
      if (name === 'connection') {
        const kept = value
          .split(',')
          .map((t) => t.trim())
          .filter((t) => t !== '' && !['upgrade', 'http2-settings'].includes(t.toLowerCase()));
        if (kept.length === 0) continue;
        value = kept.join(', ');
      }
      lines.push(`${raw[i]}: ${value}`);
    }
    if (parsedBody !== undefined) lines.push(`Content-Length: ${parsedBody.length}`);
    const start = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
    this.reinject(socket, Buffer.concat([start, ...(parsedBody ? [parsedBody] : []), head]), server);
  }

  /**
   * Forwards an upgrade request (its headers as a flat name/value list, already treated) and
   * then either tunnels (101) or relays the answer and hands the connection back to `server`.
   */
  forward(
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    headers: string[],
    server: Server,
    /** Told the upstream's status once it answered (101 or another): AfterCompletion hooks. */
    answer?: (status: number) => void,
  ): void {
    const { origin, prefix, timeoutMs, log } = this.opts;
    const path = (req.url ?? '/').split('?')[0];
    const options = {
      host: origin.hostname.replace(/^\[|\]$/g, ''),
      port: Number(origin.port) || (origin.protocol === 'https:' ? 443 : 80),
      method: req.method ?? 'GET',
      path: prefix + (req.url ?? '/'),
      headers,
      agent: false as const,
      setHost: false,
    };
    const out: ClientRequest = origin.protocol === 'https:' ? httpsRequest(options) : httpRequest(options);
    let answered = false;
    /** The connection went back to the HTTP server: what the upstream does now is no concern of it. */
    let handedBack = false;
    const onClientGone = (): void => {
      if (!handedBack) out.destroy();
    };
    socket.once('close', onClientGone);
    socket.on('error', onClientGone);
    out.setTimeout(timeoutMs, () => out.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
    out.on('error', (err: Error & { code?: string }) => {
      if (handedBack) return;
      if (!answered && socket.writable) {
        const timeout = err.code === 'TIMEOUT';
        socket.end(
          `HTTP/1.1 ${timeout ? '504 Gateway Timeout' : '502 Bad Gateway'}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
        );
      }
      socket.destroy();
      log.warn({ err: err.code ?? err.message, path }, 'upgrade to upstream failed');
    });
    out.on('upgrade', (res: IncomingMessage, upstream: Duplex, upHead: Buffer) => {
      answered = true;
      if (res.statusCode !== 101) {
        upstream.destroy();
        socket.destroy();
        return;
      }
      out.setTimeout(0);
      answer?.(101);
      socket.write(statusLine(res) + headerLines(res.rawHeaders, false));
      if (upHead.length > 0) socket.write(upHead);
      if (head.length > 0) upstream.write(head);
      const close = (): void => {
        upstream.destroy();
        socket.destroy();
      };
      upstream.on('error', close);
      upstream.on('close', close);
      socket.on('close', close);
      const tunnel = { socket, upstream, websocket: /^websocket$/i.test(req.headers.upgrade ?? '') };
      this.tunnels.add(tunnel);
      socket.once('close', () => this.tunnels.delete(tunnel));
      socket.pipe(upstream).pipe(socket);
    });
    out.on('response', (res: IncomingMessage) => {
      answered = true;
      out.setTimeout(0);
      answer?.(res.statusCode ?? 502);
      this.relay(req, res, socket, head, server, () => {
        handedBack = true;
        socket.off('close', onClientGone);
        socket.off('error', onClientGone);
      });
    });
    out.end();
  }

  /** An ordinary answer to an upgrade request: relayed, then the connection parsed as HTTP again. */
  private relay(
    req: IncomingMessage,
    res: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    server: Server,
    /** Called once the answer is relayed, before the connection goes back or ends. */
    relayed: () => void,
  ): void {
    const status = res.statusCode ?? 502;
    const bodiless = req.method === 'HEAD' || status === 204 || status === 304;
    const keep = server.listening && !tokens(req.headers.connection ?? '').has('close');
    let head$ = statusLine(res) + headerLines(res.rawHeaders, true);
    const chunked = !bodiless && res.headers['content-length'] === undefined && keep;
    if (chunked) head$ += 'Transfer-Encoding: chunked\r\n';
    if (!keep) head$ += 'Connection: close\r\n';
    socket.write(`${head$}\r\n`);
    res.on('data', (chunk: Buffer) => {
      if (bodiless) return;
      const ok = chunked
        ? socket.write(`${chunk.length.toString(16)}\r\n`) && socket.write(chunk) && socket.write('\r\n')
        : socket.write(chunk);
      if (!ok) {
        res.pause();
        socket.once('drain', () => res.resume());
      }
    });
    res.on('error', () => socket.destroy());
    res.on('end', () => {
      if (chunked) socket.write('0\r\n\r\n');
      relayed();
      if (keep && !socket.destroyed) this.reinject(socket, head, server);
      else socket.end();
    });
  }

  /** Hands a connection back to the HTTP server with `bytes` in front of what it has not read. */
  private reinject(socket: Duplex, bytes: Buffer, server: Server): void {
    if (bytes.length > 0) socket.unshift(bytes);
    server.emit('connection', socket);
  }
}

function statusLine(res: IncomingMessage): string {
  return `HTTP/1.1 ${res.statusCode} ${res.statusMessage ?? ''}\r\n`;
}

/**
 * An upstream answer's header lines. A 101 keeps its Connection/Upgrade (they are the switch);
 * an ordinary answer loses the hop-by-hop ones (framing is redone for the client). Set-Cookie
 * for hookd's own cookies is dropped from both.
 */
function headerLines(raw: string[], ordinary: boolean): string {
  let s = '';
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (ordinary && HOP_BY_HOP.has(name)) continue;
    if (name === 'set-cookie' && setsOwnCookie(raw[i + 1]!)) continue;
    s += `${raw[i]}: ${raw[i + 1]}\r\n`;
  }
  return ordinary ? s : `${s}\r\n`;
}

function tokens(list: string): Set<string> {
  return new Set(
    list
      .toLowerCase()
      .split(',')
      .map((t) => t.trim()),
  );
}

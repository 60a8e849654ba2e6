/**
 * The web console's own listener (`--console-listen`, default 127.0.0.1:8472): an origin
 * no upstream page shares, so a script injected into the proxied service cannot read console
 * pages (CSRF tokens included) or act as whoever is signed in. It serves the API alone (the
 * console's pages and the live tail the console opens), never the proxy; `/` leads to the console.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { DEFAULT_CONSOLE_LISTEN, type HookdConfig, parseListen } from '../config/index.js';
import { DEFAULT_LINGER, type LingerBounds, lingeringResponse } from '../linger/index.js';
import { closeServer, listenOn } from '../ops/index.js';
import { CONSOLE_PATH } from './console.js';

type NodeHandler = (req: IncomingMessage, res: ServerResponse) => void;
type UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer) => void;

const ARRIVED_HERE = Symbol('hookd.consoleListener');

/** Whether a request came in on the console's own listener. */
export function onConsoleListener(req: IncomingMessage): boolean {
  return (req as unknown as Record<symbol, boolean | undefined>)[ARRIVED_HERE] === true;
}

/**
 * Where console routes answer: on the console listener always; under the proxied origin only
 * with `--console-on-proxy` (elsewhere they are 404, as if absent).
 */
export function consoleServedHere(onProxy: boolean): (req: IncomingMessage) => boolean {
  return onProxy ? () => true : onConsoleListener;
}

export class ConsoleListener {
  private readonly server: Server;
  private bound = '';

  constructor(api: { request: NodeHandler; upgrade: UpgradeHandler }, apiBase: string, linger: LingerBounds) {
    const root = `${apiBase === '/' ? '' : apiBase}${CONSOLE_PATH}/`;
    // Early answers (a 413, a 401 before the body) linger like the API's (src/linger/).
    this.server = createServer(
      { keepAliveTimeout: 65_000, ServerResponse: lingeringResponse(linger) },
      (req, res) => {
        (req as unknown as Record<symbol, boolean>)[ARRIVED_HERE] = true;
        if (req.url === '/' && root !== '/') {
          res.writeHead(302, { location: root, 'content-length': '0' }).end();
          return;
        }
        if (!this.server.listening) res.setHeader('connection', 'close');
        api.request(req, res);
      },
    );
    this.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      (req as unknown as Record<symbol, boolean>)[ARRIVED_HERE] = true;
      api.upgrade(req, socket, head);
    });
  }

  /** Listens; resolves to the base URL, e.g. `http://127.0.0.1:8472`. */
  async listen(at: { host: string; port: number }): Promise<string> {
    this.bound = await listenOn(this.server, at);
    return this.bound;
  }

  url(): string {
    return this.bound;
  }

  /** Stops accepting and ends idle connections; in-flight answers finish. */
  async close(): Promise<void> {
    if (!this.server.listening) return;
    const closed = closeServer(this.server);
    this.server.closeIdleConnections();
    const timer = setTimeout(() => this.server.closeAllConnections(), 2000);
    timer.unref();
    await closed;
    clearTimeout(timer);
  }
}

/** The daemon's console listener, as its configuration says: one that does nothing when off. */
export function consoleListenerFor(
  config: Pick<HookdConfig, 'consoleEnabled' | 'consoleListen' | 'apiBase' | 'linger'>,
  api: { request: NodeHandler; upgrade: UpgradeHandler },
): { listen(): Promise<string | null>; url(): string; close(): Promise<void> } {
  const at = config.consoleListen ?? parseListen(DEFAULT_CONSOLE_LISTEN)!;
  if (!config.consoleEnabled || at === false)
    return { listen: async () => null, url: () => '', close: async () => undefined };
  const listener = new ConsoleListener(api, config.apiBase, config.linger ?? DEFAULT_LINGER);
  return { listen: () => listener.listen(at), url: () => listener.url(), close: () => listener.close() };
}

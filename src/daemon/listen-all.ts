import type { Logger } from 'pino';
import type { HookdConfig } from '../config/index.js';
import { listenAddress } from '../ops/index.js';
import type { App } from '../server/index.js';
import { packageInfo } from '../util/index.js';

/**
 * Opens the daemon's listeners (API and proxy, operations, console) and writes the one start-up
 * line (docs/DECISIONS.md "Log lines") once all are up and `ready` has run: whoever acts on that
 * line (a supervisor, `hookd user`, a test) finds everything `ready` sets up already in place.
 * Returns the API's base URL.
 */
export async function listenAll(p: {
  config: HookdConfig;
  app: App;
  opsServer: { listen(at: NonNullable<HookdConfig['opsListen']>): Promise<string> };
  consoleListener: { listen(): Promise<string | null> };
  log: Logger;
  opened: { location: string };
  engine: { readonly size: number };
  settings: { readonly eventsEnabled: boolean };
  member: { id: string } | undefined;
  ready: (url: string) => void;
}): Promise<string> {
  const { config, log } = p;
  // The Node server directly: Fastify's listen() would log a second start-up line.
  const url = await listenAddress(p.app.server, config.listen, {
    ...(config.listenMode !== undefined && { mode: config.listenMode }),
    ...(config.listenGroup !== undefined && { group: config.listenGroup }),
  });
  const opsUrl = config.opsListen ? await p.opsServer.listen(config.opsListen) : null;
  const consoleUrl = await p.consoleListener.listen();
  p.ready(url);
  log.info(
    {
      ...{ url, opsUrl, consoleUrl, upstream: config.upstream ?? null, dataDir: config.dataDir },
      ...{ store: p.opened.location, hooks: p.engine.size, version: packageInfo().version },
      ...(p.member && { instance: p.member.id }),
      ...{ apiBase: config.apiBase, events: p.settings.eventsEnabled },
    },
    'listening',
  );
  return url;
}

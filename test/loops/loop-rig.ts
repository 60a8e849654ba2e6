import { type Forwarder, startForwarder } from '../helpers/forwarder.js';
import { startHookd, type TestDaemon } from '../helpers/hookd.js';
import { startUpstream, type Upstream } from '../helpers/servers.js';

/**
 * The loop tests' rig: hookd in front of an upstream, and `alias`, hookd under another address
 * (a forwarder), which the create-time self-target check cannot know.
 */
export interface LoopRig {
  upstream: Upstream;
  d: TestDaemon;
  alias: Forwarder;
  close(): Promise<void>;
}

export async function startLoopRig(): Promise<LoopRig> {
  const upstream = await startUpstream();
  const d = await startHookd({ upstream: upstream.url });
  const alias = await startForwarder(d.url);
  return {
    upstream,
    d,
    alias,
    async close() {
      await alias.close();
      await d.close();
      await upstream.close();
    },
  };
}

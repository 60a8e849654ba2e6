/**
 * hookctl's own check of a Callback's scheme and shape, made without the daemon: every scheme
 * this build has a transport for. The daemon's `--callback-schemes` may allow fewer; it says so
 * when the hook is sent.
 */
export async function offlineSchemeCheck(): Promise<(url: URL) => string | undefined> {
  // Loaded here: the transports cost start-up time every other command can skip.
  const { callbackSchemeCheck, TransportRegistry } = await import('../transports/index.js');
  return callbackSchemeCheck(new TransportRegistry());
}

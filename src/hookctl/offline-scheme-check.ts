/**
 * hookctl's own check of a Callback's scheme and shape, made without the daemon: every scheme
 * this build has a transport for. The daemon's `--callback-schemes` may allow fewer; it says so
 * when the hook is sent.
 */
export async function offlineSchemeCheck(): Promise<{
  checkScheme: (url: URL) => string | undefined;
  checkHeaders: (url: URL, names: readonly string[]) => string | undefined;
}> {
  // Loaded here: the transports cost start-up time every other command can skip.
  const { callbackHeaderCheck, callbackSchemeCheck, TransportRegistry } = await import(
    '../transports/index.js'
  );
  const registry = new TransportRegistry();
  return { checkScheme: callbackSchemeCheck(registry), checkHeaders: callbackHeaderCheck(registry) };
}

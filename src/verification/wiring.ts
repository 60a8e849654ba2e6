/** How the daemon wires endpoint verification: per-hook mode, rate limits, the state the API shows. */
import type { Hook, RateLimit, ShownHookState } from '../hook/index.js';
import type { EndpointVerifier, VerificationMode, VerifiedItem } from './endpoint-verifier.js';

type HookLookup = () => { get(id: string): Hook | undefined };

/** The hook's mode: its own `Verification`, else the daemon's (`off` by default). */
export function verificationModeFor(engine: HookLookup, daemon: VerificationMode | undefined) {
  return (hookId: string): VerificationMode => engine().get(hookId)?.Verification ?? daemon ?? 'off';
}

function originOf(url: string): string | undefined {
  return URL.canParse(url) ? new URL(url).origin : undefined;
}

/** A hook's own `RateLimit`, else the rate its verified origin allowed (`WebHook-Allowed-Rate`). */
export function rateLimitWithAllowedRate(
  engine: HookLookup,
  verifier: () => EndpointVerifier<VerifiedItem> | undefined,
) {
  return (hookId: string): RateLimit | undefined => {
    const h = engine().get(hookId);
    if (h === undefined) return undefined;
    if (h.RateLimit !== undefined) return h.RateLimit;
    const o = originOf(h.Callback);
    return o === undefined ? undefined : verifier()?.rateFor(o);
  };
}

/** `unverified` for an active hook that asks for verification while its origin has not agreed. */
export function unverifiedState(
  modeFor: (hookId: string) => VerificationMode,
  verifier: () => EndpointVerifier<VerifiedItem> | undefined,
) {
  return (h: Hook): ShownHookState | undefined => {
    if (h.State !== 'active' || modeFor(h.Id) !== 'cloudevents') return undefined;
    const o = originOf(h.Callback);
    return o !== undefined && verifier()?.stateOf(o) !== 'verified' ? 'unverified' : undefined;
  };
}

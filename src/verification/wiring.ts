/** How the daemon wires endpoint verification: per-hook mode, rate limits, the state the API shows. */
import { type Hook, isoTimestamp, type RateLimit, type ShownHookState } from '../hook/index.js';
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

/** A hook's `VerificationResult`: its callback origin's last handshake, for the API and the console. */
export interface VerificationResult {
  At: string;
  /** The answer in a few words: "403 Forbidden", "200 without WebHook-Allowed-Origin", "no answer within 10 s". */
  Result: string;
  /** When the next handshake goes; absent when none is planned. */
  NextAt?: string;
}

/** The state the API shows of a hook, and why (its origin's last handshake). */
export interface HookVerificationView {
  (h: Hook): ShownHookState | undefined;
  verification(h: Hook): VerificationResult | undefined;
}

/**
 * `unverified` for an active hook that asks for verification while its origin has not agreed;
 * `verification` gives the last handshake of a hook that asks for verification.
 */
export function unverifiedState(
  modeFor: (hookId: string) => VerificationMode,
  verifier: () => EndpointVerifier<VerifiedItem> | undefined,
): HookVerificationView {
  const state = (h: Hook): ShownHookState | undefined => {
    if (h.State !== 'active' || modeFor(h.Id) !== 'cloudevents') return undefined;
    const o = originOf(h.Callback);
    return o !== undefined && verifier()?.stateOf(o) !== 'verified' ? 'unverified' : undefined;
  };
  const verification = (h: Hook): VerificationResult | undefined => {
    if (modeFor(h.Id) !== 'cloudevents') return undefined;
    const o = originOf(h.Callback);
    const last = o === undefined ? undefined : verifier()?.lastHandshake(o);
    if (last === undefined) return undefined;
    return {
      At: isoTimestamp(new Date(last.at)),
      Result: last.result,
      ...(last.nextAt !== undefined && { NextAt: isoTimestamp(new Date(last.nextAt)) }),
    };
  };
  return Object.assign(state, { verification });
}

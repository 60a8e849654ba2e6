/** How the daemon shows endpoint verification: the state the API shows of a hook, and why. */
import { type Hook, isoTimestamp, type ShownHookState } from '../hook/index.js';
import type { EndpointVerifier, VerificationMode, VerifiedItem } from './endpoint-verifier.js';

function originOf(url: string): string | undefined {
  return URL.canParse(url) ? new URL(url).origin : undefined;
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
  /** The hook's mode: its own `Verification`, else the daemon's (its delivery plan says). */
  modeOf: (h: Hook) => VerificationMode,
  verifier: () => EndpointVerifier<VerifiedItem> | undefined,
): HookVerificationView {
  const state = (h: Hook): ShownHookState | undefined => {
    if (h.State !== 'active' || modeOf(h) !== 'cloudevents') return undefined;
    const o = originOf(h.Callback);
    return o !== undefined && verifier()?.stateOf(o) !== 'verified' ? 'unverified' : undefined;
  };
  const verification = (h: Hook): VerificationResult | undefined => {
    if (modeOf(h) !== 'cloudevents') return undefined;
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

/**
 * Endpoint verification: `--callback-verification off|cloudevents` and a hook's
 * `Verification`. The pipeline asks `EndpointVerifier.hold` before sending; the API shows
 * `State: "unverified"` from `stateOf`.
 */
export {
  EndpointVerifier,
  type EndpointVerifierOptions,
  type HandshakeRecord,
  type OriginState,
  VERIFICATION_MODES,
  type VerificationMode,
  type VerifiedItem,
} from './endpoint-verifier.js';
export { cloudEventsHandshake, type HandshakeResult, type Preflight } from './handshake.js';
export {
  type HookVerificationView,
  unverifiedState,
  type VerificationResult,
} from './wiring.js';

/**
 * No loops: hookd's own callbacks and notifications carry a signed mark and a
 * `CDN-Loop` entry; the proxy fires nothing for a marked request and refuses one that went
 * through hookd too often; a Callback that is hookd's own address is refused when it is created.
 */
export { CDN_ID, type CutKind, LoopGuard, type LoopVerdict, MAX_PASSES, passes } from './loop-guard.js';
export { type LoopKind, LoopMarker, MARK_KEY_ID, MARK_WINDOW_S, MARKER_HEADER } from './loop-marker.js';
export { refuseLoop, refuseLoopUpgrade } from './refuse.js';
export { type OwnAddresses, selfTargetRefusal } from './self-target.js';

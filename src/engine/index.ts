// The public surface of engine/: what other folders may import. Everything else is its own.
export type { CallbackRequest, FiredEvent, FiredEventSink, TriggerInfo } from './fired-event.js';
export type { BodyNeeds, FilterError, HookCode, HookCodeOptions } from './hook-code.js';
export type { HookSetObserver } from './hook-set-observers.js';
export { MatchEngine, type Preview, type ScopeVerdict, type Trigger } from './match-engine.js';
export { MatchIndex } from './match-index.js';

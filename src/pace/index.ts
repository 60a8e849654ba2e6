// The public surface of pace/: the adaptive concurrency limit per receiver.
export type { AdaptiveOptions, PaceNote, PaceSample } from './adaptive-limit.js';
export { AdaptiveLimit } from './adaptive-limit.js';
export { type EndpointCap, ReceiverPace } from './receiver-pace.js';

// The public surface of transform/: hooks' JavaScript transforms, run in a QuickJS sandbox.
export { checkTransform, type TransformCheck } from './check-transform.js';
export { DEFAULT_TRANSFORM_LIMITS, MAX_TRANSFORM_LENGTH, type TransformLimits } from './limits.js';
export { RESERVED_TRANSFORM_HEADERS, type TransformOutcome } from './transform-output.js';
export { type TransformEvent, Transformer, type TransformerOptions } from './transformer.js';

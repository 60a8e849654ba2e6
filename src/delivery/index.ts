// The public surface of delivery/: what other folders may import. Everything else is its own.
export { AutoDisable, DEFAULT_AUTO_DISABLE, type DisableCause, type DisableRequest } from './auto-disable.js';
export type { RedeliveryFilter } from './bulk-redelivery.js';
export { SET_BY_SENDER } from './callback-headers.js';
export type { BreakerListener, BreakerOptions } from './circuit-breaker.js';
export {
  type AttemptMessage,
  type BreakerMessage,
  DeliveryEvents,
  triggerMessage,
} from './delivery-events.js';
export { DELIVERY_ID_SHAPE } from './delivery-id.js';
export { HOLD_KINDS, type HoldKind } from './fairness.js';
export {
  DeliveryPipeline,
  type DeliveryPipelineOptions,
  type PipelineStores,
  type PipelineTelemetry,
  type SendContext,
} from './pipeline.js';
export {
  DEFAULT_PLAN,
  type DeliveryPlan,
  type DeliveryPlans,
  INACTIVE_PLAN,
  PlanBook,
  samePlanForAll,
} from './plan/index.js';
export type { Retransform } from './redelivery.js';
export { type RetrySchedule, retrySchedule } from './retry-policy.js';
export { isTestRequest, TEST_HEADER } from './test-event-marker.js';

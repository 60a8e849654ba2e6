// The public surface of observability/: what other folders may import. Everything else is its own.
export { registerDeliveryMetrics } from './delivery-metrics.js';
export { Metrics, type MetricsSnapshot } from './metrics.js';
export { registerThreadMetrics, type ThreadMetricsSource } from './thread-metrics.js';

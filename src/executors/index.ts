// The public surface of executors/: the delivery threads that send a process's attempts.
export {
  DeliveryThreads,
  type DeliveryThreadsOptions,
  type ThreadCounts,
  type ThreadStats,
} from './delivery-threads.js';

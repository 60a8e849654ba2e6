// The public surface of delivery/plan/: a subject's compiled delivery plan and where plans are found.
export {
  DEFAULT_PLAN,
  type DeliveryPlan,
  type DeliveryPlans,
  INACTIVE_PLAN,
  samePlanForAll,
} from './delivery-plan.js';
export { PlanBook, type PlanBookOptions } from './plan-book.js';

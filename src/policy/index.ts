// The public surface of policy/: what other folders may import. Everything else is its own.
export {
  type AddressChecker,
  type AddressDenial,
  AddressPolicy,
  CidrError,
  describeDenial,
  SwitchablePolicy,
} from './address-policy.js';
export {
  checkCallbackTarget,
  type LookupAll,
  REFUSED_NAME_RULE,
  systemLookupAll,
} from './callback-target.js';

/**
 * The one reserved first segment under which hookd keeps its own endpoints (report, match, tail,
 * deliveries, reload, the OpenAPI document …), so that beside the seed's `/hooks` and `/hooktypes`
 * it takes no more of the upstream's path space (docs/DECISIONS.md "Path space").
 */
export const OWN_ROOT = '_hookd';
/** `/_hookd`: prefix of hookd's own endpoints below the API base. */
export const OWN_PREFIX = `/${OWN_ROOT}`;

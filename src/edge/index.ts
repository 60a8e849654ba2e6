/**
 * The proxy's edge: what hookd does so that it is safe as the first hop from the open
 * internet. Request headers that name the client or its address are hookd's (or a trusted
 * proxy's) to write; hookd's own cookies are not the upstream's to set; an Upgrade becomes a
 * tunnel only once the upstream has switched protocols.
 */

export { clientErrorAnswer, clientErrorProblem } from './client-error.js';
export { fold, HeaderHygiene, setsOwnCookie } from './header-hygiene.js';
export { HOP_BY_HOP } from './hop-by-hop.js';
export { UpgradeGate, type UpgradeGateOptions } from './upgrade-gate.js';

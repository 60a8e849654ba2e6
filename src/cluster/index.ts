// The public surface of cluster/: what other folders may import. Everything else is its own.
export { ClusterMember, newInstanceId } from './cluster-member.js';
export { Reclaimer } from './reclaimer.js';
export { TailFanout } from './tail-fanout.js';

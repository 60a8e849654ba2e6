// The public surface of ops/: what other folders may import. Everything else is its own.
export { closeServer, listenAddress, listenOn, UNIX_PEER } from './listen.js';
export { OpsServer } from './ops-server.js';

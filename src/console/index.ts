// The public surface of console/: what other folders may import. Everything else is its own.
export { type ConsoleDeps, consoleFeature } from './console.js';
export { consoleListenerFor, consoleServedHere } from './listener.js';

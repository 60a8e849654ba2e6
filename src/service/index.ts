// The public surface of service/: what other folders may import. Everything else is its own.
export { type HookChangeListener, HookService } from './hook-service.js';

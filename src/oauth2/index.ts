// The public surface of oauth2/: a hook's `Auth` field and bearer tokens by client credentials.
export {
  AUTH_JSON_SCHEMA,
  checkAuth,
  type HookAuth,
  type HookAuthView,
  type OAuth2Credentials,
  presentAuth,
} from './auth-field.js';
export { type AttemptAuth, OAuth2Bearer } from './bearer.js';
export { TokenClient, type TokenClientOptions, TokenEndpointError } from './token-client.js';

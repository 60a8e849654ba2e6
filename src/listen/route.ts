import { type ApiFeature, websocketOnly } from '../http-api/index.js';
import { LISTEN_OPENAPI_PATHS } from './openapi-paths.js';

/** `hookctl listen`'s endpoint; its upgrade is ListenServer's. */
export const LISTEN_FEATURE: ApiFeature = {
  name: 'listen',
  register: (api) =>
    websocketOnly(
      api,
      '/_hookd/listen',
      'the listen endpoint is a WebSocket: connect with Upgrade: websocket (hookctl listen --forward-to URL)',
    ),
  openApi: { paths: LISTEN_OPENAPI_PATHS },
};

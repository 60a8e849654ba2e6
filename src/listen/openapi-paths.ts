/** The listen socket in the served OpenAPI document (LISTEN_FEATURE's fragment). */
export const LISTEN_OPENAPI_PATHS = {
  '/_hookd/listen': {
    get: {
      summary:
        "Relay your hooks' callbacks to hookctl listen (WebSocket; Authorization header on the upgrade). Server frames: {kind:'ready',Listener,Hooks}, {kind:'callback',DeliveryId,HookId,HookName,Method,Url,Headers,Body,Trigger}; client frames: {kind:'result',DeliveryId,StatusCode,LatencyMs,Error,ResponseBody}, recorded as an AttemptLog entry with Via 'listener'",
      parameters: [
        {
          name: 'hook',
          in: 'query',
          description: 'A hook Id or Name of yours (repeatable); none: all your hooks',
          schema: { type: 'array', items: { type: 'string' } },
          style: 'form',
          explode: true,
        },
      ],
      responses: {
        '101': { description: 'Switching protocols' },
        '400': { description: 'A token in the URL' },
        '401': { description: 'No or bad credentials' },
        '403': { description: "FORBIDDEN: a named hook is another user's (the admin's too)" },
        '404': { description: 'A named hook does not exist' },
        '426': { description: 'A plain GET: connect with Upgrade: websocket' },
        '503': { description: 'Events are disabled' },
      },
    },
  },
} as const;

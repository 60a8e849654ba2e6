/** A callback as hookd relays it to `hookctl listen`, for the listener to send on (docs/API.md "Listen"). */
export interface RelayedCallback {
  kind: 'callback';
  DeliveryId: string;
  HookId: string;
  HookName?: string;
  Method: string;
  /** The hook's real callback URL (the CLI sends to its --forward-to instead). */
  Url: string;
  /** In the order hookd sends them, `webhook-id`, `webhook-timestamp`, `webhook-signature` included. */
  Headers: Record<string, string>;
  Body: string | null;
  /** Only hooks' callbacks are relayed, so always a request. */
  Trigger: { Kind: 'request'; Method: string; Path: string; StatusCode: number | null };
}

/**
 * Sends an attempt with `Authorization: Bearer …` for hooks that carry OAuth2 credentials: a
 * token from the shared cache, and on a 401 from the receiver one new token and one more send
 * before the answer counts. A token endpoint that fails is the attempt's outcome, named.
 */
import type { SendOutcome } from '../transports/index.js';
import type { OAuth2Credentials } from './auth-field.js';
import { type TokenClient, TokenEndpointError } from './token-client.js';

/** What the attempt runner asks: send with whatever authorization the hook needs. */
export interface AttemptAuth {
  /** Sends with a bearer token for these credentials, renewed once on a 401. */
  send(
    credentials: OAuth2Credentials,
    send: (extra: readonly string[]) => Promise<SendOutcome>,
  ): Promise<SendOutcome>;
  /** Closes its connections (shutdown). */
  close(): Promise<void>;
}

export class OAuth2Bearer implements AttemptAuth {
  constructor(private readonly tokens: TokenClient) {}

  close(): Promise<void> {
    return this.tokens.close();
  }

  async send(
    c: OAuth2Credentials,
    send: (extra: readonly string[]) => Promise<SendOutcome>,
  ): Promise<SendOutcome> {
    const started = Date.now();
    let token: string;
    try {
      token = await this.tokens.token(c);
    } catch (e) {
      return failed(e, started);
    }
    const first = await send(['authorization', `Bearer ${token}`]);
    if (first.unauthorized !== true) return first;
    this.tokens.invalidate(c, token);
    try {
      token = await this.tokens.token(c);
    } catch (e) {
      return failed(e, started);
    }
    return send(['authorization', `Bearer ${token}`]);
  }
}

/** The attempt's outcome when no token came: a retry, the endpoint's failure (its breaker counts it). */
function failed(e: unknown, started: number): SendOutcome {
  const text =
    e instanceof TokenEndpointError
      ? `not sent: ${e.message}`
      : `not sent: no token (${(e as Error).message})`;
  return { kind: 'retry', text, latencyMs: Date.now() - started };
}

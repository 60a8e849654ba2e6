import { type Http, seg } from './http.js';
import type {
  CreatedNotificationEndpoint,
  Delivery,
  NotificationEndpoint,
  NotificationEndpointInput,
  PortalLink,
  PortalLinkRequest,
  Token,
  TokenRequest,
  User,
} from './types.js';

/** `/_hookd/users…`: users and their tokens (admin only; a user may read its own record). */
export class Users {
  readonly #http: Http;
  readonly tokens: Tokens;

  constructor(http: Http) {
    this.#http = http;
    this.tokens = new Tokens(http);
  }

  async list(): Promise<User[]> {
    return (await this.#http.call<User[]>('GET', '/_hookd/users', { idempotent: true })).body;
  }

  async get(name: string): Promise<User> {
    return (await this.#http.call<User>('GET', `/_hookd/users/${seg(name)}`, { idempotent: true })).body;
  }

  /** Adds a user; Scopes default to ["own"]. */
  async add(user: User): Promise<User> {
    return (await this.#http.call<User>('POST', '/_hookd/users', { body: user })).body;
  }

  /** Replaces the user's scopes (and Permissions, when given). */
  async replace(name: string, user: User): Promise<User> {
    return (
      await this.#http.call<User>('PUT', `/_hookd/users/${seg(name)}`, { body: user, idempotent: true })
    ).body;
  }

  /** Removes the user with its tokens and hooks. */
  async remove(name: string): Promise<void> {
    await this.#http.call('DELETE', `/_hookd/users/${seg(name)}`, { idempotent: true });
  }
}

/** A user's API tokens: Ids and labels, the value only in the answer to its creation. */
export class Tokens {
  readonly #http: Http;

  constructor(http: Http) {
    this.#http = http;
  }

  async list(user: string): Promise<Token[]> {
    return (await this.#http.call<Token[]>('GET', `/_hookd/users/${seg(user)}/tokens`, { idempotent: true }))
      .body;
  }

  /** A new token; its value (`Token`) is in this answer only. */
  async create(user: string, request: NonNullable<TokenRequest> = {}): Promise<Token> {
    return (await this.#http.call<Token>('POST', `/_hookd/users/${seg(user)}/tokens`, { body: request }))
      .body;
  }

  async revoke(user: string, id: string): Promise<void> {
    await this.#http.call('DELETE', `/_hookd/users/${seg(user)}/tokens/${seg(id)}`, { idempotent: true });
  }
}

/** `POST /_hookd/portal-links`: one-time sign-ins to the embeddable portal. */
export class PortalLinks {
  readonly #http: Http;

  constructor(http: Http) {
    this.#http = http;
  }

  /** A URL that signs a browser in to the portal as `User` once, before `ExpiresAt`. */
  async create(request: PortalLinkRequest): Promise<PortalLink> {
    return (await this.#http.call<PortalLink>('POST', '/_hookd/portal-links', { body: request })).body;
  }
}

/** `/_hookd/notifications…`: where hookd tells you about disabled hooks, failed deliveries, breakers. */
export class Notifications {
  readonly #http: Http;

  constructor(http: Http) {
    this.#http = http;
  }

  async list(): Promise<NotificationEndpoint[]> {
    return (
      await this.#http.call<NotificationEndpoint[]>('GET', '/_hookd/notifications', { idempotent: true })
    ).body;
  }

  async get(id: string): Promise<NotificationEndpoint> {
    return (
      await this.#http.call<NotificationEndpoint>('GET', `/_hookd/notifications/${seg(id)}`, {
        idempotent: true,
      })
    ).body;
  }

  /** Registers an endpoint; the answer holds its signing secret, shown this once. */
  async create(endpoint: NotificationEndpointInput): Promise<CreatedNotificationEndpoint> {
    return (
      await this.#http.call<CreatedNotificationEndpoint>('POST', '/_hookd/notifications', { body: endpoint })
    ).body;
  }

  async delete(id: string): Promise<void> {
    await this.#http.call('DELETE', `/_hookd/notifications/${seg(id)}`, { idempotent: true });
  }

  /** The endpoint's last 100 notification deliveries, newest first. */
  async deliveries(id: string): Promise<Delivery[]> {
    return (
      await this.#http.call<Delivery[]>('GET', `/_hookd/notifications/${seg(id)}/deliveries`, {
        idempotent: true,
      })
    ).body;
  }
}

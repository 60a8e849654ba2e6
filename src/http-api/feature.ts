import type { FastifyInstance } from 'fastify';

/** An OpenAPI path item (`get`, `post`, `parameters` …), as the feature writes it. */
export type PathItem = Record<string, unknown>;

/** A feature's part of the served OpenAPI document (src/server/openapi.ts assembles them). */
export interface OpenApiFragment {
  /** Keyed by OpenAPI path below the API base (`/hooks/{id}`): one per resource the feature registers. */
  paths: Record<string, PathItem>;
  /** The component schemas those paths refer to as `#/components/schemas/<name>`. */
  schemas?: Record<string, unknown>;
}

/**
 * A part of the management API, registered by the feature that owns it (Fastify's plugin idea,
 * kept to what hookd needs). The server takes a list of these and knows none of them: it runs
 * `register` inside the API's scope (base prefix, authentication, problem answers) and builds the
 * OpenAPI document from the fragments. Who may call a route is stated where it is registered:
 * `resource(…, { public, events })` for the server's checks, `principalOf` for the rest.
 */
export interface ApiFeature {
  /** Names the feature in the server's complaints (a path served but not described). */
  readonly name: string;
  /** Adds the feature's routes (with `resource`) and any request hooks of its own. */
  register(api: FastifyInstance): void;
  /**
   * What its resources are, for the document. Absent only for a feature that serves no API
   * resource (the console's HTML pages); the server refuses a resource without its path item.
   */
  readonly openApi?: OpenApiFragment;
}

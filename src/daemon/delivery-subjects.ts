/**
 * What the delivery pipeline asks about the subjects of its deliveries: the hooks (the match
 * engine knows them, and their state, from memory) and the notification endpoints (the
 * notifications know them). The engine and the notifications send through the pipeline, so they
 * are made after it; this named seam is made before it and is given them once they exist. Before
 * that no delivery can be due: the pipeline starts after the assembly.
 */
import type { Hook } from '../hook/index.js';
import type { SignatureScheme } from '../signing/index.js';

/** The hooks, as the pipeline asks about them (the match engine). */
export interface HookLookup {
  get(id: string): Hook | undefined;
  isActive(id: string): boolean;
}

/** The notification endpoints, as the pipeline asks about them (the notifications). */
export interface EndpointLookup {
  isActive(id: string): boolean;
  /** A receiver said it wants no more (410 Gone): its hook or endpoint is disabled. */
  gone(id: string): Promise<void>;
  schemesOf(id: string): readonly SignatureScheme[] | undefined;
}

export class DeliverySubjects {
  #hooks: HookLookup | undefined;
  #endpoints: EndpointLookup | undefined;

  /** Gives the seam the engine and the notifications, once the assembly has made them. */
  attach(hooks: HookLookup, endpoints: EndpointLookup): void {
    this.#hooks = hooks;
    this.#endpoints = endpoints;
  }

  get hooks(): HookLookup {
    if (this.#hooks === undefined)
      throw new Error('the delivery subjects are asked before the engine is attached');
    return this.#hooks;
  }

  get endpoints(): EndpointLookup {
    if (this.#endpoints === undefined)
      throw new Error('the delivery subjects are asked before the notifications are attached');
    return this.#endpoints;
  }
}

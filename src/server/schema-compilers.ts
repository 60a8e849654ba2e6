/**
 * Fastify's JSON-schema compilers (ajv and fast-json-stringify), made the first time a route
 * with a schema needs one. Fastify loads both when the app is built, about 60 ms of start-up,
 * and no route of hookd's declares a Fastify schema (hook documents are checked by our own
 * lazily compiled ajv, src/hook/validate-hook.ts). They are the compilers Fastify would have made
 * itself, resolved from Fastify's own dependencies. One difference, with no effect while no
 * route has a schema: Fastify then treats them as custom compilers, which means a `headers`
 * schema would be given as written rather than with its property names lower-cased.
 */
import type { FastifyServerOptions } from 'fastify';
import { onDemand } from '../util/index.js';

type Factories = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;
type Factory = (...args: unknown[]) => unknown;

function onFirstUse(specifier: string): Factory {
  const selector = onDemand<() => Factory>(specifier, 'fastify');
  let factory: Factory | undefined;
  return (...args) => {
    factory ??= selector()();
    return factory(...args);
  };
}

export const schemaCompilersOnDemand = {
  buildValidator: onFirstUse('@fastify/ajv-compiler'),
  buildSerializer: onFirstUse('@fastify/fast-json-stringify-compiler'),
} as Factories;

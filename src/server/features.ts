import type { FastifyInstance } from 'fastify';
import { type ApiFeature, registeredResources } from '../http-api/index.js';

/**
 * Registers each feature on the API's scope and holds it to its description: every resource it
 * registers, with each method, has its path item, and every path item it describes is served.
 * A drift is a mistake of ours, so it stops the start (and every test) rather than serving a
 * document that lies.
 */
export function registerFeatures(api: FastifyInstance, features: readonly ApiFeature[]): void {
  for (const f of features) {
    const before = registeredResources(api).length;
    f.register(api);
    const served = registeredResources(api).slice(before);
    const described = f.openApi?.paths ?? {};
    for (const { url, allow } of served) {
      const path = url.replace(/:([A-Za-z]+)/g, '{$1}');
      const item = described[path];
      if (!item) throw new Error(`${f.name} serves ${path} but its OpenAPI fragment does not describe it`);
      for (const method of allow.split(', ').filter((m) => m !== 'HEAD')) {
        if (!item[method.toLowerCase()])
          throw new Error(`${f.name} serves ${method} ${path} but does not describe that method`);
      }
    }
    const servedPaths = new Set(served.map((r) => r.url.replace(/:([A-Za-z]+)/g, '{$1}')));
    for (const path of Object.keys(described)) {
      if (!servedPaths.has(path)) throw new Error(`${f.name} describes ${path} but does not serve it`);
    }
  }
}

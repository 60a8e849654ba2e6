// hookd's OpenAPI document as the daemon serves it, built from the same feature list without a
// running daemon: a feature's description is data, and only `register` needs its parts, so the
// parts are left out here. The build writes the client's types and schema/openapi.json from it.
import { apiFeatures } from '../src/daemon/api-routes.js';
import { notificationsFeature } from '../src/notifications/routes.js';
import { assembleOpenApi, openApiFeature } from '../src/server/openapi.js';

// Never called: the build reads descriptions only.
const unused = {} as never;

/** The document of a daemon serving its API at `base` with the console and portal pages on. */
export function openApiDocument(base = '/'): Record<string, unknown> {
  const features = apiFeatures({
    apiBase: base,
    hooks: unused,
    report: unused,
    reload: unused,
    deliveries: unused,
    users: unused,
    operations: { feature: (b) => notificationsFeature({ ...(unused as object), base: b } as never) },
    console: undefined,
    portal: { links: unused, pages: undefined },
  });
  return assembleOpenApi(base, [openApiFeature(base, features), ...features]);
}

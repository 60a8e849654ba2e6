// Writes schema/openapi.json and the client's request and response types
// (src/client/openapi-types.ts) from the document the daemon serves, with openapi-typescript, so
// that hookd/client is typed by the server's own schemas and nothing is written by hand. Run
// first by `npm run build` (through tsx: the types must exist before tsc compiles the client).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageInfo } from '../src/util/package-info.js';
import { clientTypesOf } from './openapi-client-types.js';
import { openApiDocument } from './openapi-document.js';

const root = packageInfo().root;
const doc = openApiDocument();
mkdirSync(join(root, 'schema'), { recursive: true });
writeFileSync(join(root, 'schema', 'openapi.json'), `${JSON.stringify(doc, null, 2)}\n`);
writeFileSync(join(root, 'src', 'client', 'openapi-types.ts'), await clientTypesOf(doc));

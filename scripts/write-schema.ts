// Writes the hook JSON Schema that ships in the package (schema/hook.schema.json) from the one
// the daemon validates with, so the two cannot drift. Run by `npm run build`.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HOOK_SCHEMA } from '../src/hook/hook-schema.js';
import { NOTIFICATION_SCHEMAS } from '../src/notifications/notification-schema.js';
import { packageInfo } from '../src/util/package-info.js';

const dir = join(packageInfo().root, 'schema');
mkdirSync(dir, { recursive: true });
writeFileSync(join(dir, 'hook.schema.json'), `${JSON.stringify(HOOK_SCHEMA, null, 2)}\n`);
for (const [type, schema] of Object.entries(NOTIFICATION_SCHEMAS)) {
  writeFileSync(join(dir, `notification-${type}.schema.json`), `${JSON.stringify(schema, null, 2)}\n`);
}

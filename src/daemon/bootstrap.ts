import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Store } from '../store/index.js';
import { Accounts, ADMIN_USER } from '../users/index.js';

export { ADMIN_USER };
export const ADMIN_TOKEN_FILE = 'admin.token';

/**
 * First start with no users: create `admin` and write its token to `<data-dir>/admin.token`
 * (0600) for hookctl on the same machine (SPEC §8). Only ever on an empty user table, so the token
 * stays the same across restarts and a deleted file is not silently re-created with a new token.
 */
export async function bootstrapAdmin(store: Store, dataDir: string, log: Logger): Promise<void> {
  if ((await store.listUsers()).length > 0) return;
  const accounts = new Accounts(store);
  await accounts.addUser(ADMIN_USER);
  const { token } = await accounts.createToken(ADMIN_USER, 'first start');
  const file = join(dataDir, ADMIN_TOKEN_FILE);
  writeFileSync(file, `${token}\n`, { mode: 0o600, flag: 'w' });
  log.info(
    { user: ADMIN_USER, file },
    'first start: created user admin; its API token is in the file named here',
  );
}

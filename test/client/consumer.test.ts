import assert from 'node:assert/strict';
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type HookdProcess, REPO_ROOT, spawnHookd, tempDir } from '../helpers/hookd.js';
import { type ChildResult, npmFreeEnv, runChild } from '../helpers/run-child.js';

// A consumer project of its own: the main package's packed tarball installed with npm into a
// temporary directory, a strict TypeScript file importing hookd/client and hookd/verify that
// type-checks and runs against a spawned hookd, and the same file with a wrong field name, which
// tsc refuses.

const TIMEOUT_MS = 10 * 60_000;
const TSC = join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

/** Runs a program in `cwd` with this Node first on PATH and none of `npm test`'s own settings. */
function run(file: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<ChildResult> {
  return runChild(file, args, { cwd, env: { ...npmFreeEnv(), ...env }, timeoutMs: TIMEOUT_MS });
}

// The service's back end and a receiver in one file: report a served request, create a hook for
// a user, mint a portal link, follow deliveries, verify the callback that arrives.
const PROGRAM = `import { createServer } from 'node:http';
import { HookdClient, HookdError, type Hook } from 'hookd/client';
import { verifyCallback } from 'hookd/verify';

const client = new HookdClient({ baseUrl: process.env.HOOKD_URL!, token: process.env.HOOKD_TOKEN! });
let secret = '';
const verified: boolean[] = [];
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const result = verifyCallback({ body: Buffer.concat(chunks), headers: req.headers, secret });
    verified.push(result.ok);
    res.writeHead(result.ok ? 204 : 401).end();
  });
});
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
const port = (receiver.address() as { port: number }).port;

await client.users.add({ Name: 'alice', Scopes: ['/orders'] });
const hook: Hook = await client.hooks.create({
  PathPattern: '/orders/(*)',
  Methods: ['POST'],
  Type: 1,
  Callback: \`http://127.0.0.1:\${port}/orders/$1\`,
});
secret = (await client.secrets.get(hook.Id)).Secret;
const report = await client.report({ Method: 'POST', Path: '/orders/o1', StatusCode: 201, User: 'alice' }, { idempotencyKey: 'o1' });
const link = await client.portalLinks.create({ User: 'alice', Ttl: '10m' });
let succeeded = 0;
for (let i = 0; i < 100 && succeeded === 0; i++) {
  await new Promise((r) => setTimeout(r, 100));
  for await (const d of client.deliveries.list({ hook: hook.Id, status: 'succeeded' })) succeeded += d.Attempts > 0 ? 1 : 0;
}
let code = '';
try {
  await client.hooks.get('hk_missing');
} catch (e) {
  if (e instanceof HookdError) code = \`\${e.status} \${e.code}\`;
}
console.log(JSON.stringify({ fired: report.fired, portal: link.Url.includes('/portal/open/'), succeeded, verified, code }));
receiver.close();
await client.close();
`;

let work = '';
let d: HookdProcess | undefined;

before(
  async () => {
    work = tempDir('hookd-consumer-');
    const pack = await run('npm', ['pack', '--ignore-scripts', '--pack-destination', work], REPO_ROOT);
    assert.equal(pack.code, 0, `npm pack failed:\n${pack.stderr}`);
    const tarball = readdirSync(work).find((f) => f.endsWith('.tgz'));
    assert.ok(tarball, `a tarball in ${work}`);
    writeFileSync(
      join(work, 'package.json'),
      JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
    );
    writeFileSync(
      join(work, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          types: ['node'],
          outDir: 'out',
          skipLibCheck: false,
        },
        include: ['main.ts'],
      }),
    );
    const started = Date.now();
    const install = await run(
      'npm',
      [
        'install',
        '--ignore-scripts',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        join(work, tarball),
        '@types/node@24',
      ],
      work,
    );
    assert.equal(install.code, 0, `npm install failed:\n${install.stderr}`);
    console.log(`# npm install of the tarball took ${Math.round((Date.now() - started) / 1000)} s`);
    d = await spawnHookd();
  },
  { timeout: TIMEOUT_MS },
);

after(async () => {
  await d?.stop();
  if (d) rmSync(d.dataDir, { recursive: true, force: true });
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('a consumer project using the packed tarball', { timeout: TIMEOUT_MS }, () => {
  it('type-checks with tsc --strict and runs against a spawned hookd', async () => {
    writeFileSync(join(work, 'main.ts'), PROGRAM);
    const tsc = await run(process.execPath, [TSC, '-p', 'tsconfig.json'], work);
    assert.equal(tsc.code, 0, `tsc:\n${tsc.stdout}${tsc.stderr}`);
    const r = await run(process.execPath, [join(work, 'out', 'main.js')], work, {
      HOOKD_URL: d!.url,
      HOOKD_TOKEN: d!.token,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), {
      fired: 1,
      portal: true,
      succeeded: 1,
      verified: [true],
      code: '404 NOT_FOUND',
    });
  });

  it('the same file with a wrong field name does not type-check', async () => {
    writeFileSync(
      join(work, 'main.ts'),
      PROGRAM.replace("PathPattern: '/orders/(*)'", "PathPatern: '/orders/(*)'"),
    );
    const tsc = await run(process.execPath, [TSC, '-p', 'tsconfig.json', '--noEmit'], work);
    assert.notEqual(tsc.code, 0);
    assert.match(
      tsc.stdout,
      /main\.ts\(\d+,\d+\): error TS2561: Object literal may only specify known properties, but 'PathPatern' does not exist/,
    );
  });
});

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT } from '../helpers/hookd.js';
import { requireOrSkip } from '../helpers/require.js';
import { until } from '../helpers/until.js';
import { type Background, hookctlShim, readerEnv, runBlock, shellBlocks, startBlock } from './doc-steps.js';

// README.md is the front door: at most 250 lines, and every command of its quick path works.
// The commands run as written, in the clone, with a fresh HOME (so ~/.local/state/hookd is the
// test's own), `hookctl` on the PATH as `npm link` would put it (`npm link` itself writes the
// global prefix: not run), and `npm install` taken as done (the tests run from a built clone).
// Only the ports are the test's: 8000, 9000 and 8470 become free ones, so that the run does not
// collide with anything else on this machine.

const README = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe('README.md', () => {
  it('is at most 250 lines', () => {
    const lines = README.split('\n').length - (README.endsWith('\n') ? 1 : 0);
    assert.ok(lines <= 250, `README.md has ${lines} lines`);
  });

  it('the quick path works as written: start, create a hook, fire it, see the callback, tail', {
    timeout: 120_000,
  }, async (t) => {
    if (!(await runBlock('command -v python3 curl', REPO_ROOT, process.env)).out.includes('python3'))
      return requireOrSkip(t, 'python3 and curl are needed for the README quick path');
    const blocks = shellBlocks(README);
    const install = blocks.find((b) => b.code.trim() === 'npm install && npm start');
    assert.ok(install, 'the quick start installs and starts with two commands');
    const byTerminal = (n: number) => blocks.filter((b) => b.code.startsWith(`# terminal ${n}`));
    const [t1] = byTerminal(1);
    const [t2] = byTerminal(2);
    const [create, fire] = byTerminal(3);
    const [t4] = byTerminal(4);
    const after = blocks.find((b) => b.code.includes('hookctl deliveries <hook-id>'));
    assert.ok(t1 && t2 && create && fire && t4 && after, 'the four terminals and the commands after');
    assert.match(t2.code, /^npm start\b/m, 'terminal 2 starts hookd with npm start');

    const ports = { 8000: await freePort(), 9000: await freePort(), 8470: await freePort() };
    const local = (code: string) =>
      code.replace(/\b(8000|9000|8470)\b/g, (p) => String(ports[Number(p) as keyof typeof ports]));
    const home = mkdtempSync(join(tmpdir(), 'hookd-readme-'));
    const env = readerEnv(home, hookctlShim(home), {
      HOOKD_URL: `http://127.0.0.1:${ports[8470]}`,
      HOOKD_LISTEN: `127.0.0.1:${ports[8470]}`,
      // The other two listeners keep out of the way of anything on this machine.
      HOOKD_OPS_LISTEN: '127.0.0.1:0',
      HOOKD_CONSOLE_LISTEN: '127.0.0.1:0',
      npm_config_update_notifier: 'false',
    });
    const running: Background[] = [];
    try {
      const servers = startBlock(local(t1.code), REPO_ROOT, env);
      running.push(servers);
      const hookd = startBlock(local(t2.code), REPO_ROOT, env);
      running.push(hookd);
      await until(
        `hookd answers on ${ports[8470]} (${hookd.output().slice(-300)})`,
        () =>
          fetch(`http://127.0.0.1:${ports[8470]}/hooktypes`).then(
            (r) => r.status === 401 || r.ok,
            () => false,
          ),
        { ms: 30_000, every: 200 },
      );
      await until('the upstream answers', () =>
        fetch(`http://127.0.0.1:${ports[8000]}/`).then(
          () => true,
          () => false,
        ),
      );

      const created = await runBlock(local(create.code), REPO_ROOT, env);
      assert.equal(created.code, 0, created.err);
      const hook = JSON.parse(created.out) as { Id: string };
      assert.match(hook.Id, /^hk_/, created.out);

      const tail = startBlock(local(t4.code), REPO_ROOT, env);
      running.push(tail);
      await until('hookctl tail is ready', () => tail.output().includes('Ready!'), { ms: 15_000 });

      const fired = await runBlock(local(fire.code), REPO_ROOT, env);
      assert.equal(fired.code, 0, fired.err);
      // What the README says the receiver prints, exactly.
      const shown = /the receiver in terminal 1 prints\s+`([^`]+)`/.exec(README)?.[1];
      assert.ok(shown, 'the README says what the receiver prints');
      await until(`the receiver prints ${shown}`, () => servers.output().includes(shown), { ms: 20_000 });
      await until(
        'hookctl tail shows the attempt',
        () => /\/repositories\/r1\/timeseries\/ts1\/data/.test(tail.output()) && /<--/.test(tail.output()),
        { ms: 20_000 },
      );

      for (const line of after.code.split('\n').filter((l) => l.startsWith('hookctl '))) {
        const r = await runBlock(line.replace('<hook-id>', hook.Id), REPO_ROOT, env);
        assert.equal(r.code, 0, `${line}: ${r.err}`);
        assert.ok(
          r.out.includes(hook.Id) || r.out.includes('/repositories/r1/timeseries/ts1'),
          `${line}:\n${r.out}`,
        );
      }
    } finally {
      for (const p of running.reverse()) await p.stop();
      rmSync(home, { recursive: true, force: true });
    }
  });
});

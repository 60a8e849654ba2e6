import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT, tempDir } from '../helpers/hookd.js';
import { requireOrSkip } from '../helpers/require.js';

// The shipped systemd unit: it verifies with systemd-analyze (man pages installed, as
// its Documentation= names them), it reloads with SIGHUP rather than through a hard-coded URL,
// and the man page's example, the README's install section and scripts/install.sh say the same.

const UNIT_FILE = join(REPO_ROOT, 'contrib', 'systemd', 'hookd.service');
const unit = readFileSync(UNIT_FILE, 'utf8');
const man = readFileSync(join(REPO_ROOT, 'man', 'hookd.8'), 'utf8');
const readme = readFileSync(join(REPO_ROOT, 'docs', 'guides', 'install.md'), 'utf8');
const installSh = readFileSync(join(REPO_ROOT, 'scripts', 'install.sh'), 'utf8');

/** `Key=value` settings of the unit, comments left out. */
function settings(text: string): string[] {
  return text.split('\n').filter((l) => /^[A-Za-z]+=/.test(l));
}

/** The text of roff lines between `.EX` and `.EE`, unescaped as man renders it. */
function unroff(block: string): string {
  return block
    .split('\n')
    .map((l) =>
      l
        .replace(/^\\&/, '')
        .replace(/\\-/g, '-')
        .replace(/\\e/g, '\\')
        .replace(/\\\(aq/g, "'")
        .replace(/\\\(dq/g, '"'),
    )
    .join('\n');
}

/** The example that follows "The shipped systemd unit" in EXAMPLES. */
function manExample(): string {
  const at = man.indexOf('The shipped systemd unit');
  assert.notEqual(at, -1, 'man hookd has no "The shipped systemd unit" example');
  const start = man.indexOf('.EX\n', at) + 4;
  const end = man.indexOf('\n.EE', start);
  return unroff(man.slice(start, end));
}

/** The README section "Installing for production". */
function readmeInstall(): string {
  const start = readme.indexOf('## Installing for production');
  assert.notEqual(start, -1, 'README has no "Installing for production" section');
  const end = readme.indexOf('\n## ', start + 5);
  return readme.slice(start, end === -1 ? undefined : end);
}

describe('contrib/systemd/hookd.service', () => {
  it('reloads with kill -HUP $MAINPID, not through a URL that breaks when the port changes', () => {
    assert.ok(settings(unit).includes('ExecReload=/bin/kill -HUP $MAINPID'), unit);
    assert.doesNotMatch(unit, /--server|127\.0\.0\.1:8470/);
  });

  it('man hookd’s example is the shipped unit, line for line', () => {
    assert.equal(manExample(), unit.trimEnd());
  });

  it('the README install section shows settings of the unit exactly as the unit has them', () => {
    const section = readmeInstall();
    const block = /```ini\n([\s\S]*?)```/.exec(section);
    assert.ok(block, 'an ```ini block with the unit’s settings');
    const shown = settings(block[1]!);
    assert.ok(shown.length >= 4, `only ${shown.length} settings shown`);
    for (const line of shown)
      assert.ok(settings(unit).includes(line), `README shows "${line}", the unit has not`);
    for (const key of ['ExecStart', 'ExecReload', 'StateDirectory'])
      assert.ok(
        shown.some((l) => l.startsWith(`${key}=`)),
        `README shows ${key}`,
      );
  });

  it('README, install.sh and the unit agree on where things go', () => {
    const section = readmeInstall();
    const execStart = settings(unit).find((l) => l.startsWith('ExecStart='))!;
    const config = /--config (\S+)/.exec(execStart)?.[1];
    assert.equal(config, '/etc/hookd/hookd.json');
    assert.ok(settings(unit).includes('StateDirectory=hookd'), 'state in /var/lib/hookd');
    for (const text of [section, installSh]) {
      assert.ok(text.includes(config), `names ${config}`);
      assert.ok(text.includes('contrib/systemd/hookd.service'), 'installs the shipped unit');
      assert.ok(text.includes('/etc/systemd/system/hookd.service'), 'as /etc/systemd/system/hookd.service');
      assert.match(text, /systemctl enable --now hookd/);
      assert.match(text, /npm install -g --prefix/);
    }
    assert.ok(section.includes('/var/lib/hookd'), 'README names the state directory');
    assert.match(section, /Node\.js 24\.11/);
    // No command that installs a registry package that is not ours, or a symlink to a clone.
    assert.doesNotMatch(readme, /^(sudo )?npm install -g (hookd|\.)(\s|$)|^npx hookctl|published package/m);
  });

  it('systemd-analyze verify accepts it, with the man pages installed', (t) => {
    const probe = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' });
    if (probe.error || probe.status !== 0) {
      return requireOrSkip(
        t,
        `systemd-analyze cannot run here (${probe.error?.message ?? probe.stderr.trim()})`,
      );
    }
    if (spawnSync('man', ['--version']).error) {
      return requireOrSkip(
        t,
        'man is not installed, so systemd-analyze cannot check Documentation=man:hookd(8)',
      );
    }
    const dir = tempDir('hookd-unit-');
    try {
      copyFileSync(UNIT_FILE, join(dir, 'hookd.service'));
      for (const [section, page] of [
        ['man8', 'hookd.8'],
        ['man1', 'hookctl.1'],
      ] as const) {
        mkdirSync(join(dir, 'man', section), { recursive: true });
        copyFileSync(join(REPO_ROOT, 'man', page), join(dir, 'man', section, page));
      }
      const r = spawnSync('systemd-analyze', ['verify', './hookd.service'], {
        cwd: dir,
        encoding: 'utf8',
        timeout: 60_000,
        env: { ...process.env, MANPATH: join(dir, 'man'), SYSTEMD_LOG_COLOR: '0' },
      });
      if (/System has not been booted|Failed to (connect|initialize|create)/i.test(r.stderr)) {
        return requireOrSkip(t, `systemd-analyze cannot verify here: ${r.stderr.trim()}`);
      }
      assert.equal(r.status, 0, `systemd-analyze verify failed:\n${r.stdout}${r.stderr}`);
      assert.equal(r.stderr.trim(), '', `systemd-analyze warned:\n${r.stderr}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fails verification when the man page is missing (the check can fail)', (t) => {
    const probe = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' });
    if (probe.error || probe.status !== 0 || spawnSync('man', ['--version']).error) {
      return requireOrSkip(t, 'systemd-analyze or man cannot run here');
    }
    const dir = tempDir('hookd-unit-');
    try {
      copyFileSync(UNIT_FILE, join(dir, 'hookd.service'));
      mkdirSync(join(dir, 'man'));
      const r = spawnSync('systemd-analyze', ['verify', './hookd.service'], {
        cwd: dir,
        encoding: 'utf8',
        timeout: 60_000,
        env: { ...process.env, MANPATH: join(dir, 'man') },
      });
      assert.notEqual(r.status, 0, 'verify passed without the man page');
      assert.match(r.stderr, /man hookd\(8\)/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

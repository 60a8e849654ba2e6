import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Command } from 'commander';
import { ALL_OPTIONS } from '../../src/config/options.js';
import { hookColumns } from '../../src/hookctl/commands/hooks/hook-columns.js';
import { buildProgram } from '../../src/hookctl/main.js';
import { requireOrSkip } from '../helpers/require.js';
import { ROOT } from './helpers.js';

const HOOKCTL = join(ROOT, 'man', 'hookctl.1');
const HOOKD = join(ROOT, 'man', 'hookd.8');

/** The text a reader sees (roff escapes for "-" undone). */
function text(file: string): string {
  return readFileSync(file, 'utf8').replaceAll('\\-', '-');
}

describe('man pages', () => {
  it('groff renders hookctl.1 and hookd.8 without a single warning', (t) => {
    if (spawnSync('groff', ['--version']).status !== 0) {
      return requireOrSkip(t, 'groff is not installed (apt-get install groff-base): man pages not checked');
    }
    const r = spawnSync('groff', ['-ww', '-man', '-Tutf8', HOOKCTL, HOOKD], { encoding: 'utf8' });
    assert.equal(r.status, 0);
    assert.equal(r.stderr, '', 'groff -ww warnings');
    assert.ok(r.stdout.length > 10000);
  });

  it('hookctl.1 documents every command, global option, exit code and variable', () => {
    const page = text(HOOKCTL);
    const sections = [
      'NAME',
      'SYNOPSIS',
      'DESCRIPTION',
      'COMMANDS',
      'ENVIRONMENT',
      'FILES',
      '"EXIT STATUS"',
      'EXAMPLES',
    ];
    for (const s of sections) assert.match(page, new RegExp(`^\\.SH ${s.replaceAll('"', '"?')}`, 'm'), s);
    const headings = page.split('\n').filter((l) => l.startsWith('.SS '));
    for (const c of [
      'hooks list',
      'get ID',
      'create -f FILE',
      'replace ID -f FILE',
      'delete ID',
      'types',
      'match METHOD PATH',
      'deliveries HOOK',
      'redeliver DELIVERY_ID',
      'redeliver --hook ID',
      'tail',
      'validate -f FILE',
      'reload',
      'login',
      'profile list',
      'completion bash|zsh|fish',
      'users list',
      'users add NAME',
      'users remove NAME',
      'users grant NAME',
      'users revoke NAME',
      'tokens create USER',
      'tokens list',
      'tokens revoke USER',
      'hooks enable ID',
      'notifications list',
      'notifications add URL',
      'notifications remove ID',
    ]) {
      assert.ok(
        headings.some((h) => h.includes(c)),
        `command ${c} has a heading`,
      );
    }
    for (const o of [
      '--server',
      '--profile',
      '--output',
      '--no-color',
      '--debug',
      '--status',
      '--since',
      '--until',
      '--limit',
      '--hook',
      '--scope',
      '--label',
    ]) {
      assert.ok(page.includes(o), `option ${o}`);
    }
    for (const v of [
      'HOOKD_URL',
      'HOOKD_TOKEN',
      'HOOKD_DATA_DIR',
      'HOOKCTL_PROFILE',
      'XDG_CONFIG_HOME',
      'NO_COLOR',
    ]) {
      assert.match(page, new RegExp(`^\\.B ${v}$`, 'm'), `variable ${v}`);
    }
    for (const code of ['0', '1', '2', '3', '4'])
      assert.match(page, new RegExp(`^\\.TP\\n\\.B ${code}$`, 'm'), `exit ${code}`);
  });

  it("hookctl.1's SYNOPSIS names every command hookctl has, and every hooks subcommand", () => {
    const page = text(HOOKCTL);
    const synopsis = page.slice(page.indexOf('.SH SYNOPSIS'), page.indexOf('.SH DESCRIPTION'));
    // One entry per `.br` (or `.PP`), as a reader sees it: font changes and macro names gone, one line.
    const entries = synopsis.split(/^\.(?:br|PP)$/m).map((e) =>
      e
        .replace(/\\f[BIR]/g, '')
        .replace(/^\.[A-Z]+ ?/gm, '')
        .replaceAll('"', '')
        .replace(/\s+/g, ' ')
        .trim(),
    );
    // "hookctl list | get | create" names three commands.
    const named = new Set(
      entries.flatMap((e) => /^hookctl ((?:[\w-]+ ?\| ?)*[\w-]+)/.exec(e)?.[1]?.split(/ ?\| ?/) ?? []),
    );
    const program = buildProgram(() => {
      throw new Error('not run');
    });
    for (const cmd of program.commands)
      assert.ok(named.has(cmd.name()), `SYNOPSIS has hookctl ${cmd.name()}`);
    const hooks = program.commands.find((c) => c.name() === 'hooks')!;
    const hooksLine = entries.find((e) => e.startsWith('hookctl hooks ')) ?? '';
    for (const sub of hooks.commands)
      assert.ok(hooksLine.includes(sub.name()), `hookctl hooks ${sub.name()}`);
  });

  it("hookctl.1's hooks list names the columns -o wide adds, once", () => {
    const page = text(HOOKCTL);
    const start = page.indexOf('.SS "hooks list');
    const section = page.slice(start, page.indexOf('\n.SS', start + 4)).replaceAll('\n', ' ');
    assert.equal((section.match(/\badds\b/g) ?? []).length, 1, section);
    const base = new Set(hookColumns('table', [], false).map((c) => c.header));
    for (const c of hookColumns('wide', [], false).filter((c) => !base.has(c.header))) {
      assert.ok(section.includes(c.header), `-o wide's ${c.header}`);
    }
  });

  it('hookctl.1 documents every option of the users and tokens commands', () => {
    const page = text(HOOKCTL);
    const program = buildProgram(() => {
      throw new Error('not run');
    });
    for (const name of ['users', 'tokens']) {
      const cmd = program.commands.find((c) => c.name() === name);
      assert.ok(cmd, name);
      for (const sub of cmd.commands) {
        assert.ok(page.includes(`.SS "${name} ${sub.name()}`), `${name} ${sub.name()} has a heading`);
        for (const o of sub.options) assert.ok(page.includes(o.long!), `${name} ${sub.name()} ${o.long}`);
      }
    }
  });

  it("each hookctl command's section lists exactly the options the command registers", () => {
    const page = text(HOOKCTL);
    const commands = page.slice(
      page.indexOf('\n.SH COMMANDS'),
      page.indexOf('\n.SH', page.indexOf('\n.SH COMMANDS') + 5),
    );
    const sections = commands
      .split('\n.SS ')
      .slice(1)
      .map((chunk) => {
        const nl = chunk.indexOf('\n');
        const heading = chunk.slice(0, nl).replaceAll('"', '');
        return { items: heading.split(', ').map((i) => i.trim()), body: chunk };
      });
    const program = buildProgram(() => {
      throw new Error('not run');
    });
    const globals = new Set(program.options.flatMap((o) => [o.long, o.short]).filter(Boolean));
    const leaves: { path: string; cmd: Command }[] = [];
    const walk = (cmd: Command, path: string[]) => {
      if (cmd.commands.length === 0 && cmd !== program) leaves.push({ path: path.join(' '), cmd });
      for (const sub of cmd.commands) walk(sub, [...path, sub.name()]);
    };
    walk(program, []);
    assert.ok(leaves.length >= 20, `found ${leaves.length} commands`);
    for (const { path, cmd } of leaves) {
      const mine = sections.filter((s) => s.items.some((i) => i === path || i.startsWith(`${path} `)));
      assert.ok(mine.length > 0, `hookctl ${path} has a section in man hookctl`);
      const body = mine.map((s) => s.body).join('\n');
      const registered = cmd.options.filter((o) => o.long !== '--help');
      for (const o of registered) {
        assert.ok(
          body.includes(o.long!) || (o.short !== undefined && new RegExp(`${o.short}\\b`).test(body)),
          `the section of hookctl ${path} describes ${o.flags}`,
        );
      }
      // The other way round: an option the section lists (.TP items) is one the command has.
      const listed = [...body.matchAll(/^\.TP\n\.B[IR]? (--[a-z-]+)/gm)].map((m) => m[1]!);
      const known = new Set(registered.flatMap((o) => [o.long, o.short]));
      for (const flag of listed) {
        assert.ok(
          known.has(flag) || globals.has(flag),
          `hookctl ${path} has the option ${flag} its man section lists`,
        );
      }
    }
  });

  it('hookd.8 documents every daemon option with its variable and config key', () => {
    const page = text(HOOKD);
    for (const o of ALL_OPTIONS) {
      assert.ok(page.includes(o.flag.split(' ')[0]!), `flag ${o.flag}`);
      assert.match(page, new RegExp(`^\\.B ${o.env}$`, 'm'), `variable ${o.env}`);
      assert.match(
        page,
        new RegExp(`^\\.B ${o.fileKey.replace('.', '\\.')}$`, 'm'),
        `config key ${o.fileKey}`,
      );
    }
    for (const endpoint of [
      'POST /hooks',
      'GET /hooktypes',
      'POST /_hookd/match',
      'POST /_hookd/report',
      '/deliveries',
      '/redeliver',
      'GET /_hookd/tail',
      'GET /healthz',
      'GET /readyz',
      'GET /_hookd/openapi.json',
      'GET /metrics',
      'POST /_hookd/reload',
      'GET /_hookd/notifications',
      'POST /_hookd/notifications',
      '/enable',
    ]) {
      assert.ok(page.includes(endpoint), `endpoint ${endpoint}`);
    }
    for (const s of ['SIGTERM', 'SIGHUP', 'admin.token', 'HOOKD_CONFIG', 'STATE_DIRECTORY'])
      assert.ok(page.includes(s), s);
    for (const code of ['0', '1', '2'])
      assert.match(page, new RegExp(`^\\.TP\\n\\.B ${code}$`, 'm'), `exit ${code}`);
  });
});

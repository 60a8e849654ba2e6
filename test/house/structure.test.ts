import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

// The house rules of docs/DECISIONS.md ("The assembly's last knots"), read from the
// TypeScript sources themselves: each folder's surface is its index.ts, no file over 400 lines,
// no circle of files and no two folders importing each other.
const here = dirname(fileURLToPath(import.meta.url));
const ROOT = [here, join(here, '..', '..', '..')].find((d) =>
  existsSync(join(d, 'src', 'daemon', 'hookd.ts')),
)!;
const SRC = join(ROOT, 'src');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return sources(p);
    return name.endsWith('.ts') ? [p] : [];
  });
}

interface Import {
  from: string;
  to: string;
  typeOnly: boolean;
}

const STATEMENT = /^(import|export)(\s+type)?\s[^;]*?\sfrom\s+'(\.[^']+)';/gms;

function importsOf(file: string): Import[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(STATEMENT)].map((m) => ({
    from: file,
    to: normalize(join(dirname(file), m[3]!.replace(/\.js$/, '.ts'))),
    typeOnly: m[2] !== undefined,
  }));
}

const folderOf = (file: string) => relative(SRC, file).split(sep)[0]!;
const files = sources(SRC);
const imports = files.flatMap(importsOf);

describe('the structure of src/', () => {
  it('finds the sources and their imports (a guard against checking nothing)', () => {
    assert.ok(files.length > 200, `${files.length} files`);
    assert.ok(imports.length > 1000, `${imports.length} imports`);
  });

  it('imports another folder only through its index.ts (the folder states its surface)', () => {
    const deep = imports
      .filter((i) => folderOf(i.from) !== folderOf(i.to) && !i.to.endsWith(`${sep}index.ts`))
      .map((i) => `${relative(SRC, i.from)} -> ${relative(SRC, i.to)}`);
    assert.deepEqual(deep, []);
    for (const folder of new Set(files.map(folderOf))) {
      if (folder.endsWith('.ts')) continue;
      assert.ok(existsSync(join(SRC, folder, 'index.ts')), `src/${folder}/index.ts`);
    }
  });

  it('has no file over 400 lines', () => {
    const long = files
      .map((f) => [relative(SRC, f), readFileSync(f, 'utf8').split('\n').length - 1] as const)
      .filter(([, n]) => n > 400);
    assert.deepEqual(long, []);
  });

  it('has no two folders importing each other (type imports included)', () => {
    const pairs = new Set(imports.map((i) => `${folderOf(i.from)} ${folderOf(i.to)}`));
    const both = [...pairs].filter((p) => {
      const [a, b] = p.split(' ');
      return a !== b && pairs.has(`${b} ${a}`);
    });
    assert.deepEqual(both, []);
  });

  it('has no circle of files (value imports)', () => {
    const edges = new Map<string, string[]>();
    for (const i of imports) if (!i.typeOnly) edges.set(i.from, [...(edges.get(i.from) ?? []), i.to]);
    const state = new Map<string, 'open' | 'done'>();
    const circles: string[] = [];
    const visit = (f: string, path: string[]) => {
      if (state.get(f) === 'done') return;
      if (state.get(f) === 'open') {
        circles.push([...path.slice(path.indexOf(f)), f].map((p) => relative(SRC, p)).join(' -> '));
        return;
      }
      state.set(f, 'open');
      for (const t of edges.get(f) ?? []) visit(t, [...path, f]);
      state.set(f, 'done');
    };
    for (const f of files) visit(f, []);
    assert.deepEqual(circles, []);
  });
});

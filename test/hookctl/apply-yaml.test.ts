import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { startHookd, type TestDaemon, tempDir } from '../helpers/hookd.js';
import { cleanEnv, runInProcess } from './helpers.js';

// Hooks as code in YAML: `hookctl apply -f hooks.yaml` and `diff` read YAML files and
// multi-document streams (the `yaml` package), and errors name the file, the line and the field.

let d: TestDaemon;
let env: NodeJS.ProcessEnv;
let dir: string;

before(async () => {
  d = await startHookd();
  env = cleanEnv({ HOOKD_URL: d.url, HOOKD_TOKEN: d.token });
  dir = tempDir('hookd-apply-yaml-');
});

after(async () => {
  await d.close();
  rmSync(dir, { recursive: true, force: true });
});

function write(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

const STREAM = `# two documents, the second a list
Name: yaml-one
PathPattern: /yaml-one/(*)
Methods: [POST]
Callback: http://127.0.0.1:9/one
---
- Name: yaml-two
  PathPattern: /yaml-two
  Methods:
    - GET
  Callback: http://127.0.0.1:9/two
- Name: yaml-three
  PathPattern: /yaml-three
  Methods: [PUT]
  Callback: http://127.0.0.1:9/three
---
`;

describe('hookctl apply and diff with YAML', () => {
  it('apply reads a multi-document YAML stream; a second apply and diff find nothing to do', async () => {
    const file = write('hooks.yaml', STREAM);
    const first = await runInProcess(['apply', '-f', file], { env, tty: false });
    assert.equal(first.code, 1, first.stderr);
    assert.deepEqual(first.stdout.trim().split('\n').sort(), [
      'hook/yaml-one created',
      'hook/yaml-three created',
      'hook/yaml-two created',
    ]);
    const res = await fetch(`${d.url}/hooks/yaml-two`, { headers: { authorization: `Bearer ${d.token}` } });
    assert.deepEqual(((await res.json()) as { Methods: string[] }).Methods, ['GET']);

    const again = await runInProcess(['apply', '-f', file], { env, tty: false });
    assert.equal(again.code, 0, again.stderr);
    const diff = await runInProcess(['diff', '-f', file], { env, tty: false });
    assert.equal(diff.code, 0, diff.stderr);
    assert.equal(diff.stdout, '');

    write('hooks.yaml', STREAM.replace('Methods: [PUT]', 'Methods: [PUT, PATCH]'));
    const changed = await runInProcess(['diff', '-f', file], { env, tty: false });
    assert.equal(changed.code, 1, changed.stderr);
    assert.match(changed.stdout, /^--- hook\/yaml-three /m);
    assert.match(changed.stdout, /^\+\s+"PATCH"$/m);
  });

  it('a directory mixes .json and .yml files; standard input may be YAML', async () => {
    const sub = tempDir('hookd-apply-mixed-');
    try {
      writeFileSync(
        join(sub, 'a.json'),
        JSON.stringify({
          Name: 'mixed-json',
          PathPattern: '/mj',
          Methods: ['GET'],
          Callback: 'http://127.0.0.1:9/mj',
        }),
      );
      writeFileSync(
        join(sub, 'b.yml'),
        'Name: mixed-yaml\nPathPattern: /my\nMethods: [GET]\nCallback: http://127.0.0.1:9/my\n',
      );
      const r = await runInProcess(['apply', '-f', sub, '--dry-run'], { env, tty: false });
      assert.equal(r.code, 1, r.stderr);
      assert.equal(r.stdout, 'hook/mixed-json created (dry run)\nhook/mixed-yaml created (dry run)\n');
    } finally {
      rmSync(sub, { recursive: true, force: true });
    }
    const stdin = Readable.from([
      Buffer.from('Name: from-stdin\nPathPattern: /stdin\nMethods: [GET]\nCallback: http://127.0.0.1:9/s\n'),
    ]) as unknown as NodeJS.ReadStream;
    const piped = await runInProcess(['apply', '-f', '-', '--dry-run'], { env, tty: false, stdin });
    assert.equal(piped.code, 1, piped.stderr);
    assert.equal(piped.stdout, 'hook/from-stdin created (dry run)\n');
  });

  it('a YAML syntax error names the file, line and column (exit 2)', async () => {
    const file = write('broken.yaml', 'Name: broken\nMethods: [GET\nCallback: x\n');
    const r = await runInProcess(['apply', '-f', file], { env, tty: false });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, new RegExp(`${file.replaceAll('/', '\\/')}:\\d+:\\d+: `));
  });

  it('a duplicate key is refused with its line', async () => {
    const file = write('dup.yaml', 'Name: dup\nPathPattern: /a\nPathPattern: /b\nMethods: [GET]\n');
    const r = await runInProcess(['apply', '-f', file], { env, tty: false });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, new RegExp(`${file.replaceAll('/', '\\/')}:3:\\d+: .*[Uu]nique`));
  });

  it('a hook without Name in the second document names the file and its line', async () => {
    const file = write(
      'nameless.yaml',
      'Name: named\nPathPattern: /n\nMethods: [GET]\nCallback: http://127.0.0.1:9/n\n---\nPathPattern: /x\nMethods: [GET]\n',
    );
    const r = await runInProcess(['apply', '-f', file], { env, tty: false });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, new RegExp(`${file.replaceAll('/', '\\/')}:6: the hook has no Name`));
  });

  it('an invalid field names the file, the line the field is on, and the field', async () => {
    const file = write(
      'invalid.yaml',
      'Name: bad-method\nPathPattern: /bad\nMethods:\n  - GET\n  - "GE T"\nCallback: http://127.0.0.1:9/b\nRetries: 3\n',
    );
    const r = await runInProcess(['apply', '-f', file], { env, tty: false });
    assert.equal(r.code, 5, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stderr, /hook\/bad-method \(.*invalid\.yaml:1\)/);
    assert.match(r.stderr, new RegExp(`Methods\\[1\\]: ${file.replaceAll('/', '\\/')}:5: must be`));
    assert.match(r.stderr, new RegExp(`Retries: ${file.replaceAll('/', '\\/')}:7: is not a hook field`));
  });
});

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Ajv } from 'ajv';
import { HOOK_SCHEMA } from '../../src/hook/hook-schema.js';
import { packageInfo } from '../../src/util/package-info.js';

describe('the shipped hook JSON Schema', () => {
  const file = join(packageInfo().root, 'schema', 'hook.schema.json');

  it('is the schema the daemon validates with (npm run build writes it)', () => {
    assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), HOOK_SCHEMA);
  });

  it('accepts the seed example and refuses a misspelt field, in any draft-07 validator', () => {
    const validate = new Ajv({ allErrors: true }).compile(JSON.parse(readFileSync(file, 'utf8')));
    const hook = {
      $schema: './node_modules/hookd/schema/hook.schema.json',
      PathPattern: '/repositories/*/timeseries/(*)',
      Methods: ['GET'],
      StatusCodeBlackList: [401],
      Callback: 'https://chat.example.com/hook',
      CallbackContent: '$REQUEST_PATH',
    };
    assert.equal(validate(hook), true, JSON.stringify(validate.errors));
    assert.equal(validate({ ...hook, pathPattern: '/x' }), false);
  });
});

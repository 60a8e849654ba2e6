import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FieldError } from '../../src/errors/index.js';
import { HookdError } from '../../src/errors/index.js';
import { CONTENT_ESCAPES, type ContentEscape } from '../../src/hook/content-escape.js';
import { lintHook } from '../../src/hook/lint-hook.js';
import { compileTemplate, type TemplateContext } from '../../src/hook/template.js';
import { validateHook } from '../../src/hook/validate-hook.js';

function ctx(captures: string[], requestPath = '/r'): TemplateContext {
  return {
    requestPath,
    requestUri: `http://hookd.example${requestPath}`,
    requestMethod: 'GET',
    statusCode: 200,
    hookId: 'hk_x',
    hookType: 1,
    timestamp: '2026-11-22T12:00:00.000Z',
    captures,
  };
}

const TEXT = '{"text": "repository $1"}';
const text = (mode: ContentEscape | undefined, value: string, mediaType = 'application/json'): string => {
  const body = compileTemplate(TEXT, mediaType, { escape: mode }).render(ctx([value]));
  return mediaType === 'application/json' ? (JSON.parse(body) as { text: string }).text : body;
};

describe('ContentEscape in the template renderer', () => {
  it('slack escapes & < > as entities, so no <!channel>, <@U…> or <url|text> can be formed', () => {
    assert.equal(text('slack', '<!channel>'), 'repository &lt;!channel&gt;');
    assert.equal(
      text('slack', '<https://evil.example|click here> & co'),
      'repository &lt;https://evil.example|click here&gt; &amp; co',
    );
    assert.equal(text('slack', 'plain-name_1'), 'repository plain-name_1');
  });

  it('applies before the media type escaping: a quote is still JSON-escaped', () => {
    const body = compileTemplate(TEXT, 'application/json', { escape: 'slack' }).render(ctx(['"<x>"']));
    assert.equal(body, '{"text": "repository \\"&lt;x&gt;\\""}');
  });

  it('escapes every substituted value, $REQUEST_URI and $REQUEST_PATH included', () => {
    const t = compileTemplate('<$REQUEST_URI|open> $REQUEST_PATH', 'text/plain', { escape: 'slack' });
    assert.equal(
      t.render(ctx([], '/a/<!here>')),
      '<http://hookd.example/a/&lt;!here&gt;|open> /a/&lt;!here&gt;',
    );
  });

  it('discord backslashes Markdown and breaks @everyone, @here and <@id>', () => {
    assert.equal(text('discord', '@everyone'), 'repository @\u200beveryone');
    assert.equal(
      text('discord', '[click](https://evil.example)'),
      'repository \\[click\\]\\(https://evil\\.example\\)',
    );
    assert.equal(text('discord', '<@123>'), 'repository \\<@\u200b123\\>');
    assert.equal(text('discord', '**bold** `code`'), 'repository \\*\\*bold\\*\\* \\`code\\`');
  });

  it('mattermost uses entities for < > & (it expands <!channel> before Markdown) and breaks @channel', () => {
    assert.equal(text('mattermost', '<!channel>'), 'repository &lt;!channel&gt;');
    assert.equal(text('mattermost', '@channel [x](y)'), 'repository @\u200bchannel \\[x\\]\\(y\\)');
  });

  it('markdown backslashes the punctuation CommonMark reads, and nothing else', () => {
    assert.equal(text('markdown', '# _x_ | ~y~'), 'repository \\# \\_x\\_ \\| \\~y\\~');
    assert.equal(text('markdown', 'plain name 42'), 'repository plain name 42');
  });

  it('none and no mode leave the value as the media type alone would', () => {
    assert.equal(text('none', '<!channel>'), 'repository <!channel>');
    assert.equal(text(undefined, '<!channel>'), 'repository <!channel>');
  });

  it('leaves the template text itself alone (only values are escaped)', () => {
    const t = compileTemplate('<!here> *$1*', 'text/plain', { escape: 'discord' });
    assert.equal(t.render(ctx(['a*b'])), '<!here> *a\\*b*');
  });
});

async function refusal(doc: unknown): Promise<FieldError[]> {
  try {
    await validateHook(doc);
  } catch (e) {
    assert.ok(e instanceof HookdError);
    return e.errors ?? [];
  }
  assert.fail('the hook was accepted');
}

const HOOK = { PathPattern: '/repositories/(*)', Methods: ['GET'], Callback: 'https://chat.example/h' };

describe('ContentEscape in the hook', () => {
  it('is kept when set, and dropped for none (the default)', async () => {
    assert.equal((await validateHook({ ...HOOK, ContentEscape: 'slack' })).ContentEscape, 'slack');
    assert.equal((await validateHook({ ...HOOK, ContentEscape: 'none' })).ContentEscape, undefined);
    for (const m of CONTENT_ESCAPES) await validateHook({ ...HOOK, ContentEscape: m });
  });

  it('an unknown mode is refused naming ContentEscape, its modes and the closest one', async () => {
    const [e] = await refusal({ ...HOOK, ContentEscape: 'slak' });
    assert.equal(e?.field, 'ContentEscape');
    assert.match(
      e!.message,
      /must be one of none, slack, mattermost, discord, markdown; did you mean slack\?/,
    );
  });

  it('the lint warns when a JSON chat message substitutes values without ContentEscape', () => {
    const lint = (over: Record<string, string>) =>
      lintHook({ ...HOOK, Type: 1, CallbackContent: TEXT, ...over }).warnings.filter(
        (w) => w.field === 'ContentEscape',
      );
    assert.equal(lint({}).length, 1);
    assert.match(lint({})[0]!.message, /"ContentEscape": "slack"/);
    assert.equal(lint({ ContentEscape: 'none' }).length, 1);
    assert.equal(lint({ CallbackContent: '{"content": "$1"}' }).length, 1, 'Discord says content');
    assert.deepEqual(lint({ ContentEscape: 'slack' }), []);
    assert.deepEqual(lint({ CallbackContent: '{"text": "fixed"}' }), [], 'nothing is substituted');
    assert.deepEqual(lint({ CallbackContent: '{"path": "$1"}' }), [], 'not a chat message');
  });
});

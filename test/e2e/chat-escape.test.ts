import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api, startHookd, type TestDaemon } from '../helpers/hookd.js';
import {
  createHook,
  type Receiver,
  startReceiver,
  startUpstream,
  type Upstream,
} from '../helpers/servers.js';

// A stranger's request through hookd must not become chat markup in the owner's channel: the
// README's chat example with `ContentEscape`, end to end to a real receiver.

let upstream: Upstream;
let receiver: Receiver;
let d: TestDaemon;

const CHAT = {
  PathPattern: '/repositories/(*)/timeseries/*/attributes/(*)',
  Methods: ['GET'],
  CallbackContent: '{"text": "Attribute $2 of repository $1 was read: <$REQUEST_URI|open>"}',
};

before(async () => {
  upstream = await startUpstream();
  receiver = await startReceiver();
  d = await startHookd({ upstream: upstream.url });
});

after(async () => {
  await d?.close();
  await receiver?.close();
  await upstream?.close();
});

describe('ContentEscape end to end', () => {
  it('slack: a request for <!channel> delivers &lt;!channel&gt;', async () => {
    const hook = await createHook(d, {
      ...CHAT,
      Callback: `${receiver.url}/slack`,
      ContentEscape: 'slack',
    });
    assert.equal(hook.ContentEscape, 'slack');
    receiver.reset();
    const path = '/repositories/%3C!channel%3E/timeseries/ts1/attributes/x';
    const res = await fetch(d.url + path);
    await res.arrayBuffer();
    const [call] = await receiver.waitFor(1);
    const { text } = JSON.parse(call!.body) as { text: string };
    assert.equal(text, `Attribute x of repository &lt;!channel&gt; was read: <${d.url}${path}|open>`);
    assert.ok(!text.includes('<!channel>'));
    await api(d.url, d.token, 'DELETE', `/hooks/${hook.Id}`);
  });

  it('a hook without it delivers the markup as sent, and create warns about it', async () => {
    const res = await api<{ Id: string; Warnings?: { Field: string; Message: string }[] }>(
      d.url,
      d.token,
      'POST',
      '/hooks',
      { ...CHAT, Callback: `${receiver.url}/plain` },
    );
    assert.equal(res.status, 201);
    assert.ok(
      res.body.Warnings?.some((w) => w.Field === 'ContentEscape'),
      JSON.stringify(res.body.Warnings),
    );
    receiver.reset();
    await (await fetch(`${d.url}/repositories/%3C!here%3E/timeseries/ts1/attributes/x`)).arrayBuffer();
    const [call] = await receiver.waitFor(1);
    assert.match(call!.body, /repository <!here> was read/);
    await api(d.url, d.token, 'DELETE', `/hooks/${res.body.Id}`);
  });

  it('an unknown mode is a 400 naming ContentEscape and the closest mode, on create and validate', async () => {
    for (const path of ['/hooks', '/_hookd/validate']) {
      const res = await api<{ errors: { field: string; message: string }[] }>(d.url, d.token, 'POST', path, {
        ...CHAT,
        Callback: `${receiver.url}/x`,
        ContentEscape: 'discrod',
      });
      assert.equal(res.status, 400, path);
      const e = res.body.errors.find((x) => x.field === 'ContentEscape');
      assert.match(e?.message ?? '', /did you mean discord\?/, path);
    }
  });
});

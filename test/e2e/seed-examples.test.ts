import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { startHookd, type TestDaemon } from '../helpers/hookd.js';
import {
  createHook,
  type FireMark,
  firedCalls,
  fireMark,
  type Receiver,
  startReceiver,
  startUpstream,
  type Upstream,
} from '../helpers/servers.js';

// The two example behaviours of the seed (Events, item 5), end to end: a client talks to hookd
// in front of a real upstream, and a real receiver gets the callbacks.

let upstream: Upstream;
let receiver: Receiver;
let d: TestDaemon;

before(async () => {
  // The upstream refuses anything under `secret` with 401, as a service does for a forbidden read.
  upstream = await startUpstream((req, res) => {
    req.resume();
    req.on('end', () => {
      const status = req.url?.includes('/secret') ? 401 : 200;
      res.writeHead(status, { 'content-type': 'application/json' }).end('{"value":42}');
    });
  });
  receiver = await startReceiver();
  d = await startHookd({ upstream: upstream.url });
});

after(async () => {
  await d?.close();
  await receiver?.close();
  await upstream?.close();
});

/** Where the fired count stood when the test began: its callbacks are the ones fired since. */
let mark: FireMark;
beforeEach(async () => {
  receiver.reset();
  mark = await fireMark(d.opsUrl, receiver);
});

describe('seed example 1: post the request path of every time series read', () => {
  const ts = '/repositories/r1/timeseries';
  let hookId: string;

  before(async () => {
    const hook = await createHook(d, {
      PathPattern: '/repositories/*/timeseries/(*)',
      Methods: ['GET'],
      StatusCodeBlackList: [401],
      Callback: `${receiver.url}/incoming/ts-reads`,
      CallbackContent: '$REQUEST_PATH',
    });
    hookId = hook.Id;
  });

  after(async () => {
    const res = await fetch(`${d.url}/hooks/${hookId}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${d.token}` },
    });
    assert.equal(res.status, 204);
  });

  it('fires for a time series, its data and its attributes, and for nothing else', async () => {
    const fires = [`${ts}/ts1`, `${ts}/ts1/data`, `${ts}/ts1/attributes/unit`];
    const quiet: [string, string][] = [
      ['GET', `${ts}/secret`], // upstream answers 401: black-listed
      ['POST', `${ts}/ts1`], // not in Methods
      ['GET', ts], // one segment short of the pattern
      ['GET', '/repositories/r1/other/ts1'],
      ['GET', '/repositories'],
      ['GET', '/'],
    ];
    for (const p of fires) {
      const res = await fetch(d.url + p);
      assert.equal(res.status, 200);
      await res.arrayBuffer();
    }
    for (const [method, p] of quiet) {
      const res = await fetch(d.url + p, { method, ...(method === 'POST' && { body: '{}' }) });
      await res.arrayBuffer();
      if (p.endsWith('/secret')) assert.equal(res.status, 401, 'the upstream status reaches the client');
    }
    await receiver.waitFor(fires.length);
    const calls = await firedCalls(d.opsUrl, receiver, mark);
    assert.equal(calls.length, fires.length, JSON.stringify(calls.map((c) => c.body)));
    assert.deepEqual(calls.map((c) => c.body).sort(), [...fires].sort());
    for (const c of calls) {
      assert.equal(c.method, 'POST');
      assert.equal(c.url, '/incoming/ts-reads');
      assert.equal(c.headers['content-type'], 'application/json');
    }
  });

  it('posts the path without the query string', async () => {
    const res = await fetch(`${d.url}${ts}/ts9/data?from=2020-01-01&to=2021-01-01`);
    await res.arrayBuffer();
    const [call] = await receiver.waitFor(1);
    assert.equal(call!.body, `${ts}/ts9/data`);
  });
});

describe('seed example 2: a chat card naming repository $1 and attribute $2', () => {
  // An incoming-webhook message in the shape Teams accepts: an Adaptive Card whose `$schema`
  // must reach the chat application untouched.
  const card = `{
  "type": "message",
  "attachments": [{
    "contentType": "application/vnd.microsoft.card.adaptive",
    "content": {
      "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
      "type": "AdaptiveCard",
      "version": "1.4",
      "body": [
        {"type": "TextBlock", "text": "Attribute $2 of repository $1 was read", "wrap": true},
        {"type": "FactSet", "facts": [{"title": "Repository", "value": "$1"}, {"title": "Attribute", "value": "$2"}]}
      ],
      "actions": [{"type": "Action.OpenUrl", "title": "Open", "url": "$REQUEST_URI"}]
    }
  }]
}`;

  interface Card {
    type: string;
    attachments: {
      content: {
        $schema: string;
        body: [{ text: string }, { facts: { value: string }[] }];
        actions: { url: string }[];
      };
    }[];
  }

  before(async () => {
    await createHook(d, {
      PathPattern: '/repositories/(*)/timeseries/*/attributes/(*)',
      Methods: ['GET'],
      Callback: `${receiver.url}/webhookb2/team-channel`,
      CallbackContent: card,
      CallbackContentMediaType: 'application/json',
    });
  });

  const cases: { name: string; repo: string; attr: string; decodedRepo: string; decodedAttr: string }[] = [
    { name: 'plain names', repo: 'r1', attr: 'unit', decodedRepo: 'r1', decodedAttr: 'unit' },
    {
      name: 'a quote and a backslash',
      repo: 'my%22repo%22',
      attr: 'back%5Cslash',
      decodedRepo: 'my"repo"',
      decodedAttr: 'back\\slash',
    },
    {
      name: 'a line feed and a tab',
      repo: 'line%0Afeed',
      attr: 'tab%09bed',
      decodedRepo: 'line\nfeed',
      decodedAttr: 'tab\tbed',
    },
    {
      name: 'percent-encoded unicode',
      repo: '%C3%A9t%C3%A9',
      attr: '%F0%9F%98%80%E2%80%A8x',
      decodedRepo: 'été',
      decodedAttr: '😀\u2028x',
    },
    {
      name: 'JSON structure characters',
      repo: '%7B%7D%5B%5D%2C%3A',
      attr: '%22%7D%5D%7D',
      decodedRepo: '{}[],:',
      decodedAttr: '"}]}',
    },
  ];

  for (const c of cases) {
    it(`renders a valid card for ${c.name}`, async () => {
      const pathAndQuery = `/repositories/${c.repo}/timeseries/ts1/attributes/${c.attr}?view=full&q=%22x%22`;
      const res = await fetch(d.url + pathAndQuery);
      assert.equal(res.status, 200);
      await res.arrayBuffer();
      const [call] = await receiver.waitFor(1);
      assert.equal(call!.url, '/webhookb2/team-channel');
      assert.equal(call!.headers['content-type'], 'application/json');
      const doc = JSON.parse(call!.body) as Card;
      const content = doc.attachments[0]!.content;
      assert.equal(content.$schema, 'http://adaptivecards.io/schemas/adaptive-card.json');
      assert.equal(doc.type, 'message');
      assert.deepEqual(
        content.body[1].facts.map((f) => f.value),
        [c.decodedRepo, c.decodedAttr],
      );
      assert.equal(
        content.body[0].text,
        `Attribute ${c.decodedAttr} of repository ${c.decodedRepo} was read`,
      );
      assert.equal(content.actions[0]!.url, `${d.url}${pathAndQuery}`);
      const calls = await firedCalls(d.opsUrl, receiver, mark);
      assert.equal(calls.length, 1);
    });
  }

  it('does not fire for the time series itself or for a PUT of an attribute', async () => {
    await (await fetch(`${d.url}/repositories/r1/timeseries/ts1/attributes`)).arrayBuffer();
    await (
      await fetch(`${d.url}/repositories/r1/timeseries/ts1/attributes/unit`, { method: 'PUT', body: '"m"' })
    ).arrayBuffer();
    const calls = await firedCalls(d.opsUrl, receiver, mark);
    // Only the first example's hook is gone; nothing of the card hook may have fired.
    assert.deepEqual(
      calls.filter((c) => c.url === '/webhookb2/team-channel'),
      [],
    );
  });
});

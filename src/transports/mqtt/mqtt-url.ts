/**
 * `mqtt://USER:PASS@HOST:PORT/TOPIC-TEMPLATE?qos=0|1|2&retain=true`: the topic is the path
 * without its leading `/`, URL-decoded. What the create-time check refuses and what a send reads.
 */
import { type BrokerTarget, brokerTarget, escapeForBroker, safeDecode } from '../broker-link/index.js';

export const MQTT_PORT = 1883;
export const MQTTS_PORT = 8883;

export type Qos = 0 | 1 | 2;

/** A rendered MQTT Callback, ready to publish. */
export interface MqttTarget extends BrokerTarget {
  readonly topic: string;
  readonly qos: Qos;
  readonly retain: boolean;
  readonly tls: boolean;
}

const OPTIONS = ['qos', 'retain'];

// A template reference at the front ($1, ${1}, $REQUEST_PATH…) is a value, escaped when rendered;
// the names are the template's own (a transport does not import the hook model).
const LEADING_REFERENCE =
  /^\$(\{?\d|\{?(REQUEST_PATH|REQUEST_URI|REQUEST_METHOD|REQUEST_USER|STATUS_CODE|HOOK_ID|TIMESTAMP)\b)/;

export const defaultPort = (url: URL): number => (url.protocol === 'mqtts:' ? MQTTS_PORT : MQTT_PORT);

// A value fills one topic level: `/` would add levels, `#` and `+` are the subscribers' wildcards,
// NUL is forbidden in a topic, `$` at the front makes a topic the broker's own ($SYS), and `%`
// is escaped so that the encoding can be read back.
const SPECIAL = /[%/#+$\0]/g;

/** A template value escaped for an MQTT topic level, then URL-encoded for the Callback URL. */
export function escapeTopicValue(value: string): string {
  return escapeForBroker(value, SPECIAL);
}

/** The topic of a URL: its path without the leading `/`, decoded (undefined when malformed). */
export function topicOf(url: URL): string | undefined {
  return safeDecode(url.pathname.replace(/^\//, ''));
}

/** The create-time check of an MQTT Callback (templates unrendered). */
export function checkMqttUrl(url: URL): string | undefined {
  if (url.hostname === '') return 'must name the MQTT broker host, e.g. mqtt://127.0.0.1:1883/ts/$1/read';
  // `#` starts a URL fragment, so a `#` written into the topic shows up there.
  if (url.hash !== '' || url.href.endsWith('#')) {
    return 'the topic must not contain the wildcard "#": a publish names one topic, wildcards are for subscribers';
  }
  const topic = topicOf(url);
  if (topic === undefined) return 'the topic is not well percent-encoded (write "%" as %25)';
  if (topic === '') return 'must name the MQTT topic as its path, e.g. mqtt://127.0.0.1:1883/ts/$1/read';
  for (const w of ['#', '+']) {
    if (topic.includes(w)) {
      return `the topic must not contain the wildcard "${w}": a publish names one topic, wildcards are for subscribers`;
    }
  }
  if (topic.includes('\0')) return 'the topic must not contain the NUL character';
  if (startsWithBrokerTopic(topic)) {
    return 'the topic must not start with "$": such topics are the broker\'s own ($SYS)';
  }
  return checkOptions(url.searchParams);
}

function startsWithBrokerTopic(topic: string): boolean {
  return topic.startsWith('$') && !LEADING_REFERENCE.test(topic);
}

function checkOptions(params: URLSearchParams): string | undefined {
  for (const name of new Set(params.keys())) {
    if (!OPTIONS.includes(name)) return `option "${name}" is unknown: MQTT Callbacks take qos and retain`;
    if (params.getAll(name).length > 1) return `option "${name}" is given more than once`;
  }
  const qos = params.get('qos');
  if (qos !== null && !['0', '1', '2'].includes(qos)) {
    const n = Number(qos);
    const closest = Number.isFinite(n) ? Math.min(2, Math.max(0, Math.round(n))) : 1;
    return `option qos must be 0, 1 or 2 (closest valid value: qos=${closest})`;
  }
  const retain = params.get('retain');
  if (retain !== null && retain !== 'true' && retain !== 'false') {
    const closest = ['1', 'yes', 'on', 'True', 'TRUE'].includes(retain) ? 'true' : 'false';
    return `option retain must be true or false (closest valid value: retain=${closest})`;
  }
  return undefined;
}

/** The publish target of a rendered Callback URL, or the rule it breaks. */
export function parseMqttUrl(url: URL): MqttTarget | string {
  const problem = checkMqttUrl(url);
  if (problem !== undefined) return problem;
  const qos = Number(url.searchParams.get('qos') ?? '1') as Qos;
  return {
    ...brokerTarget(url, defaultPort(url)),
    topic: topicOf(url)!,
    qos,
    retain: url.searchParams.get('retain') === 'true',
    tls: url.protocol === 'mqtts:',
  };
}

// The public surface of transports/mqtt/: the MQTT 5 transport module (mqtt:, mqtts:).
import { brokerReceiverKey, describeBrokerUrl } from '../broker-link/index.js';
import { onFirstSend } from '../on-first-send.js';
import type { TransportModule } from '../transport.js';
import { checkMqttUrl, defaultPort, escapeTopicValue } from './mqtt-url.js';

/** MQTT 5 (Mosquitto and others): topic templated from the URL path, QoS 1 PUBACK = delivered. */
export const mqttTransport: TransportModule = {
  schemes: ['mqtt', 'mqtts'],
  receiverKey: (url) => brokerReceiverKey(url, defaultPort(url)),
  check: checkMqttUrl,
  escapeValue: escapeTopicValue,
  describe: describeBrokerUrl,
  create: (ctx) =>
    onFirstSend(ctx, 'MQTT', async () => (await import('./mqtt-transport.js')).createMqttTransport),
};

import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as the OTLP/HTTP JSON export carries it, ids as lowercase hex. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean>;
  status: { code?: number; message?: string };
  service: string | undefined;
}

export interface OtlpReceiver {
  /** Base URL, e.g. `http://127.0.0.1:4318` (the exporter appends `/v1/traces`). */
  url: string;
  spans: ReceivedSpan[];
  /** Content types of the export requests seen (the exporter sends JSON here). */
  contentTypes: string[];
  waitFor(check: (spans: ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

/** OTLP ids are hex in JSON; a base64 one (the protobuf JSON mapping) is turned into hex. */
function hexId(id: unknown, length: number): string {
  if (typeof id !== 'string' || id === '') return '';
  if (id.length === length && /^[0-9a-fA-F]+$/.test(id)) return id.toLowerCase();
  return Buffer.from(id, 'base64').toString('hex');
}

function attributeValue(v: Record<string, unknown>): string | number | boolean {
  if ('stringValue' in v) return v.stringValue as string;
  if ('intValue' in v) return Number(v.intValue);
  if ('doubleValue' in v) return Number(v.doubleValue);
  if ('boolValue' in v) return v.boolValue as boolean;
  return JSON.stringify(v);
}

/**
 * A loopback OTLP/HTTP traces receiver written for the tests: accepts `POST /v1/traces` with a
 * JSON body (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`, what @opentelemetry/exporter-trace-otlp-http
 * sends) and keeps every span. A protobuf body is refused with 415, so a test would see it.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  let waiters: (() => void)[] = [];
  const read = (req: IncomingMessage) =>
    new Promise<string>((resolve) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    });
  const server = createServer(async (req, res) => {
    const body = await read(req);
    contentTypes.push(String(req.headers['content-type']));
    if (req.method !== 'POST' || req.url !== '/v1/traces') return res.writeHead(404).end();
    if (!String(req.headers['content-type']).startsWith('application/json')) return res.writeHead(415).end();
    const doc = JSON.parse(body) as {
      resourceSpans?: {
        resource?: { attributes?: { key: string; value: Record<string, unknown> }[] };
        scopeSpans?: { spans?: Record<string, unknown>[] }[];
      }[];
    };
    for (const rs of doc.resourceSpans ?? []) {
      const service = rs.resource?.attributes?.find((a) => a.key === 'service.name')?.value.stringValue as
        | string
        | undefined;
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          const attributes: ReceivedSpan['attributes'] = {};
          for (const a of (s.attributes as { key: string; value: Record<string, unknown> }[]) ?? [])
            attributes[a.key] = attributeValue(a.value);
          spans.push({
            traceId: hexId(s.traceId, 32),
            spanId: hexId(s.spanId, 16),
            parentSpanId: hexId(s.parentSpanId, 16),
            name: s.name as string,
            kind: Number(s.kind),
            attributes,
            status: (s.status as ReceivedSpan['status']) ?? {},
            service,
          });
        }
      }
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    const w = waiters;
    waiters = [];
    for (const f of w) f();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    async waitFor(check, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!check(spans)) {
        const left = deadline - Date.now();
        if (left <= 0)
          throw new Error(`spans not as expected within ${timeoutMs} ms: ${JSON.stringify(spans, null, 1)}`);
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, Math.min(left, 200));
          waiters.push(() => {
            clearTimeout(t);
            resolve();
          });
        });
      }
      return spans;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

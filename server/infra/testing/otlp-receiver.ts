/**
 * A real OTLP/HTTP trace receiver for tests: `POST /v1/traces` in `application/json` (OTLP/JSON)
 * or `application/x-protobuf`. No protobuf library is installed (OpenTelemetry's own transformer
 * only encodes, by hand), so the protobuf body is read here by its wire format with the field
 * numbers of opentelemetry-proto's trace.proto and common.proto; only the fields the tests read.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  status: { code: number; message: string };
  service: string;
}

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  /** Every request body as received (text for JSON, latin1 for protobuf), for probe scans. */
  bodies: string[];
  contentTypes: string[];
  close(): Promise<void>;
}

type Fields = Map<number, (bigint | Buffer)[]>;

function readVarint(buf: Buffer, at: number): [bigint, number] {
  let value = 0n;
  let shift = 0n;
  for (;;) {
    const byte = buf[at++] as number;
    value |= BigInt(byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) return [value, at];
    shift += 7n;
  }
}

/** One message's fields by number: varints and fixed as bigint, length-delimited as Buffer. */
function fields(buf: Buffer): Fields {
  const out: Fields = new Map();
  let at = 0;
  while (at < buf.length) {
    const [tag, next] = readVarint(buf, at);
    at = next;
    const field = Number(tag >> 3n);
    const wire = Number(tag & 7n);
    let value: bigint | Buffer;
    if (wire === 0) [value, at] = readVarint(buf, at);
    else if (wire === 1) {
      value = buf.readBigUInt64LE(at);
      at += 8;
    } else if (wire === 5) {
      value = BigInt(buf.readUInt32LE(at));
      at += 4;
    } else if (wire === 2) {
      const [length, start] = readVarint(buf, at);
      value = buf.subarray(start, start + Number(length));
      at = start + Number(length);
    } else throw new Error(`protobuf: unsupported wire type ${wire}`);
    const list = out.get(field);
    if (list) list.push(value);
    else out.set(field, [value]);
  }
  return out;
}

const bytes = (f: Fields, n: number) => (f.get(n)?.[0] as Buffer | undefined) ?? Buffer.alloc(0);
const str = (f: Fields, n: number) => bytes(f, n).toString("utf8");
const all = (f: Fields, n: number) => (f.get(n) ?? []) as Buffer[];

function protoValue(buf: Buffer): string | number | boolean {
  const f = fields(buf);
  if (f.has(1)) return str(f, 1);
  const scalar = (n: number) => (f.get(n)?.[0] as bigint | undefined) ?? 0n;
  if (f.has(2)) return scalar(2) === 1n;
  if (f.has(3)) return Number(BigInt.asIntN(64, scalar(3)));
  if (f.has(4)) return Buffer.from(scalar(4).toString(16).padStart(16, "0"), "hex").readDoubleBE();
  return "";
}

function protoAttributes(list: Buffer[]): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const kv of list) {
    const f = fields(kv);
    out[str(f, 1)] = protoValue(bytes(f, 2));
  }
  return out;
}

function decodeProtobuf(body: Buffer): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const rs of all(fields(body), 1)) {
    const resource = fields(rs);
    const service = String(protoAttributes(all(fields(bytes(resource, 1)), 1))["service.name"] ?? "");
    for (const ss of all(resource, 2)) {
      for (const raw of all(fields(ss), 2)) {
        const s = fields(raw);
        const status = fields(bytes(s, 15));
        spans.push({
          traceId: bytes(s, 1).toString("hex"),
          spanId: bytes(s, 2).toString("hex"),
          parentSpanId: bytes(s, 4).toString("hex"),
          name: str(s, 5),
          kind: Number((s.get(6)?.[0] as bigint | undefined) ?? 0n),
          attributes: protoAttributes(all(s, 9)),
          status: { code: Number((status.get(3)?.[0] as bigint | undefined) ?? 0n), message: str(status, 2) },
          service,
        });
      }
    }
  }
  return spans;
}

type JsonValue = {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
};
type JsonKv = { key: string; value: JsonValue };

function jsonAttributes(list: JsonKv[] | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of list ?? []) {
    out[key] =
      value.stringValue ??
      value.boolValue ??
      (value.intValue !== undefined ? Number(value.intValue) : undefined) ??
      value.doubleValue ??
      "";
  }
  return out;
}

function decodeJson(text: string): ReceivedSpan[] {
  const body = JSON.parse(text) as {
    resourceSpans: {
      resource?: { attributes?: JsonKv[] };
      scopeSpans: {
        spans: {
          traceId: string;
          spanId: string;
          parentSpanId?: string;
          name: string;
          kind: number;
          attributes?: JsonKv[];
          status?: { code?: number; message?: string };
        }[];
      }[];
    }[];
  };
  const spans: ReceivedSpan[] = [];
  for (const rs of body.resourceSpans) {
    const service = String(jsonAttributes(rs.resource?.attributes)["service.name"] ?? "");
    for (const ss of rs.scopeSpans) {
      for (const s of ss.spans) {
        spans.push({
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId ?? "",
          name: s.name,
          kind: s.kind,
          attributes: jsonAttributes(s.attributes),
          status: { code: s.status?.code ?? 0, message: s.status?.message ?? "" },
          service,
        });
      }
    }
  }
  return spans;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const bodies: string[] = [];
  const contentTypes: string[] = [];
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const type = req.headers["content-type"] ?? "";
    if (req.method !== "POST" || req.url !== "/v1/traces") {
      res.writeHead(404).end();
      return;
    }
    contentTypes.push(type);
    try {
      if (type.includes("json")) {
        bodies.push(body.toString("utf8"));
        spans.push(...decodeJson(body.toString("utf8")));
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      } else {
        bodies.push(body.toString("latin1"));
        spans.push(...decodeProtobuf(body));
        res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
      }
    } catch (error) {
      res.writeHead(400).end(String(error));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    bodies,
    contentTypes,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

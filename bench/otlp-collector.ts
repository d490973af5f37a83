/**
 * The OTLP/HTTP receiver of the telemetry bench, in a process of its own as a collector would be:
 * decoding the spans in the bench's own process would stall the clients that measure latency,
 * and count against the traced side. Forked by bench/telemetry.bench.ts; answers over IPC.
 */
import { startOtlpReceiver } from "../server/infra/testing/otlp-receiver";

export interface CollectorCount {
  spans: number;
  requests: number;
  contentType: string;
}

const receiver = await startOtlpReceiver();
process.send?.({ url: receiver.url });
process.on("message", (message: { type?: string }) => {
  if (message.type !== "count") return;
  const count: CollectorCount = {
    spans: receiver.spans.length,
    requests: receiver.bodies.length,
    contentType: receiver.contentTypes[0] ?? "none",
  };
  process.send?.(count);
});
process.on("disconnect", () => void receiver.close().then(() => process.exit(0)));

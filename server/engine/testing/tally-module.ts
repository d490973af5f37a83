/**
 * A capability module whose impls call a local HTTP receiver (served-process.ts `startReceiver`),
 * for the tests of durable actions in real server processes: every time an impl runs, the
 * receiver counts a hit under `<trial>:<op>`, so a test can tell how often each impl really ran.
 * `tally.peek` is a read, `tally.record` a write; both return what the receiver answered.
 */
import type { CapabilityModule } from "../../core/capabilities/types";

async function call(receiverUrl: string, op: "peek" | "record", trial: string, body?: string) {
  const url = `${receiverUrl}/${op}?trial=${encodeURIComponent(`${trial}:${op}`)}`;
  const res = await fetch(url, body === undefined ? {} : { method: "POST", body });
  const text = await res.text();
  if (!res.ok) throw new Error(`the receiver answered ${res.status}`);
  return text;
}

export function tallyModule(receiverUrl: string): CapabilityModule {
  return {
    name: "tally",
    description: "Reads and writes with side effects a test counts on a local receiver.",
    source: "builtin",
    versionHash: "tally-v1",
    exports: [
      {
        spec: {
          name: "tally.peek",
          description: "Reads the receiver's JSON answer for a trial.",
          category: "read",
          inputSchema: {
            type: "object",
            properties: { trial: { type: "string" } },
            required: ["trial"],
            additionalProperties: false,
          },
        },
        impl: async (_run, args) => JSON.parse(await call(receiverUrl, "peek", String(args.trial))),
      },
      {
        spec: {
          name: "tally.record",
          description: "Posts a line to the receiver (the side effect).",
          category: "write",
          inputSchema: {
            type: "object",
            properties: { trial: { type: "string" }, line: { type: "string" } },
            required: ["trial", "line"],
            additionalProperties: false,
          },
        },
        impl: async (_run, args) => ({
          recorded: String(args.line),
          reply: await call(receiverUrl, "record", String(args.trial), String(args.line)),
        }),
      },
    ],
  };
}

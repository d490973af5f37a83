/**
 * `npm start` loads node-adapter.ts twice: scripts/serve.ts's front server makes the Request, and
 * the MCP handler inside Next's bundle reads it (clientGone, readBodyText). What one copy learns
 * of a request must reach the other, or a client that hangs up leaves its action running, and a
 * body held aside reads as empty.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it, vi } from "vitest";

type Adapter = typeof import("./node-adapter");

/** A fresh copy of the module, as a separately bundled route gets. */
async function freshCopy(): Promise<Adapter> {
  vi.resetModules();
  return import("./node-adapter");
}

describe("node-adapter across copies of the module", () => {
  it("a Request made by one copy has its disconnect signal and its body in another", async () => {
    const front = await freshCopy();
    const route = await freshCopy();
    expect(route).not.toBe(front);
    const seen: { body: string | null; aborted: boolean[] } = { body: null, aborted: [] };
    let hangUp: (() => void) | undefined;
    const finished = new Promise<void>((resolve) => {
      hangUp = resolve;
    });
    const server = http.createServer((req, res) => {
      const request = front.toFetchRequest(req, res, { bodyAside: true });
      void (async () => {
        seen.body = await route.readBodyText(request, 1024);
        const gone = route.clientGone(request);
        seen.aborted.push(gone.aborted);
        gone.addEventListener("abort", () => {
          seen.aborted.push(gone.aborted);
          hangUp?.();
        });
        res.write("working"); // then the client hangs up before the end
      })();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const client = http.request({ host: "127.0.0.1", port, method: "POST", path: "/api/mcp" }, (res) => {
        res.once("data", () => client.destroy());
      });
      client.on("error", () => {});
      client.end('{"jsonrpc":"2.0"}');
      // Without the shared state the abort never comes: give it 5 s, then compare what was seen.
      await Promise.race([finished, new Promise((resolve) => setTimeout(resolve, 5_000))]);
      expect(seen).toEqual({ body: '{"jsonrpc":"2.0"}', aborted: [false, true] });
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

/**
 * The front server's admission (admission.ts), first on its own and then in front of a real HTTP
 * handler: at most `limit` requests run, the waiting ones go in turn per client, a long request
 * stops counting after `releaseAfterMs`, and a client that leaves the queue is not served.
 */
import type http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { yieldAdmission } from "../mcp/node-adapter";
import { createAdmission } from "./admission";
import { createFrontServer, MCP_PATH } from "./front-server";
import { createRequestGuard } from "./request-guard";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("admission", () => {
  it("runs at most `limit` at once and starts the waiting ones in turn per client", () => {
    const admission = createAdmission({ limit: 2, releaseAfterMs: 60_000 });
    const first = admission.tryEnter();
    const second = admission.tryEnter();
    expect(first && second).toBeTruthy();
    expect(admission.tryEnter()).toBeUndefined();
    const started: string[] = [];
    const releases: (() => void)[] = [];
    const queue = (name: string, client: string) =>
      admission.wait(client, (release) => {
        started.push(name);
        releases.push(release);
      });
    queue("a1", "a");
    queue("a2", "a");
    queue("a3", "a");
    queue("b1", "b");
    expect(admission.counts()).toEqual({ running: 2, waiting: 4 });
    // While some wait, a newcomer does not jump the queue even when a slot frees.
    first?.();
    expect(admission.tryEnter()).toBeUndefined();
    expect(started).toEqual(["a1"]);
    second?.();
    second?.(); // a second release is a no-op
    // b's first request goes before a's second: one turn per client.
    expect(started).toEqual(["a1", "b1"]);
    releases[0]?.();
    releases[1]?.();
    expect(started).toEqual(["a1", "b1", "a2", "a3"]);
    expect(admission.counts()).toEqual({ running: 2, waiting: 0 });
  });

  it("stops counting a request that has run `releaseAfterMs`, and drops one whose client left", () => {
    vi.useFakeTimers();
    try {
      const admission = createAdmission({ limit: 1, releaseAfterMs: 50 });
      const long = admission.tryEnter();
      expect(long).toBeTruthy();
      let gone = false;
      const leave = admission.wait("x", () => {
        gone = true;
      });
      let started = false;
      admission.wait("y", () => {
        started = true;
      });
      leave();
      expect(admission.counts()).toEqual({ running: 1, waiting: 1 });
      vi.advanceTimersByTime(49);
      expect(started).toBe(false);
      vi.advanceTimersByTime(1);
      expect(started).toBe(true);
      expect(gone).toBe(false);
      long?.(); // its slot was already given back: this must not free a second one
      expect(admission.counts()).toEqual({ running: 1, waiting: 0 });
      vi.advanceTimersByTime(50);
      expect(admission.counts()).toEqual({ running: 0, waiting: 0 });
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("admission in the front server", () => {
  let server: http.Server | undefined;
  afterEach(() => {
    server?.closeAllConnections();
    server?.close();
  });

  it("serves POSTs to the admitted path `limit` at a time and leaves other paths alone", async () => {
    let running = 0;
    let most = 0;
    const slow = async () => {
      running += 1;
      most = Math.max(most, running);
      await sleep(30);
      running -= 1;
      return new Response("ok");
    };
    server = createFrontServer({
      guard: createRequestGuard({ allowedOrigins: [] }),
      routes: { [MCP_PATH]: () => slow, "/other": () => slow },
      fallback: (_req, res) => res.writeHead(404).end(),
      admission: {
        paths: new Set([MCP_PATH]),
        admission: createAdmission({ limit: 2, releaseAfterMs: 60_000 }),
      },
    });
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const post = (p: string, key: string) =>
      fetch(`${base}${p}`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: "{}" }).then(
        (r) => r.text(),
      );
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => post(MCP_PATH, `k${i % 3}`)));
    expect(answers).toEqual(Array(8).fill("ok"));
    expect(most).toBe(2);
    most = 0;
    await Promise.all(Array.from({ length: 6 }, () => post("/other", "k")));
    expect(most).toBe(6);
  });

  it("gives a request's slot to the next one as soon as its handler yields it (a wait for a human)", async () => {
    let waiting = 0;
    const events: string[] = [];
    const handler = async (request: Request) => {
      const name = request.headers.get("x-name") ?? "";
      events.push(`start ${name}`);
      if (name === "waits") {
        yieldAdmission(request);
        waiting += 1;
        await sleep(300);
      }
      events.push(`end ${name}`);
      return new Response(name);
    };
    server = createFrontServer({
      guard: createRequestGuard({ allowedOrigins: [] }),
      routes: { [MCP_PATH]: () => handler },
      fallback: (_req, res) => res.writeHead(404).end(),
      admission: {
        paths: new Set([MCP_PATH]),
        admission: createAdmission({ limit: 1, releaseAfterMs: 60_000 }),
      },
    });
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${MCP_PATH}`;
    const post = (name: string) =>
      fetch(url, { method: "POST", headers: { "x-name": name }, body: "{}" }).then((r) => r.text());
    const first = post("waits");
    while (waiting === 0) await sleep(5);
    // The only slot was yielded: this one runs while the first still waits.
    expect(await post("next")).toBe("next");
    expect(events).toEqual(["start waits", "start next", "end next"]);
    expect(await first).toBe("waits");
  });
});

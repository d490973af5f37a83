/**
 * toolstore/ui over MCP with the SDK's own Client on real HTTP: a client with form elicitation
 * answers ui.ask and ui.confirm, a client without it gets client_required naming what is missing,
 * ui.progress arrives as an MCP progress notification, and the wait for an answer does not count
 * against the action's deadline, nor its request's admission slot at the front server.
 */
import fs from "node:fs";
import type http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  type ClientCapabilities,
  ElicitRequestSchema,
  type ElicitResult,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Db } from "../db";
import { deployMigrations } from "../db/migrate";
import { createPrismaPorts, type ServerEngine, startServerEngine } from "../engine";
import { createAdmission } from "../http/admission";
import { createFrontServer, MCP_PATH } from "../http/front-server";
import { createRequestGuard } from "../http/request-guard";
import { createApiKey } from "../services/api-keys";
import { createMcpHttpHandler } from "./http";
import { createMcpBackend } from "./mcp-backend";
import { serveFetchHandler } from "./node-adapter";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolstore-mcp-ui-"));
let db: Db;
let engine: ServerEngine;
let server: { url: string; close(): Promise<void> };
let handler: (request: Request) => Promise<Response>;
let apiKey: string;

type Envelope = { ok: boolean; result?: unknown; calls: { capability: string; category: string }[] };

async function connect(
  capabilities: ClientCapabilities,
  answer?: (params: unknown) => Promise<ElicitResult>,
  url = server.url,
) {
  const client = new Client({ name: "ui-probe", version: "2.0.0" }, { capabilities });
  if (answer) client.setRequestHandler(ElicitRequestSchema, (request) => answer(request.params));
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${apiKey}` } },
    }),
  );
  return client;
}

async function run(client: Client, code: string, onprogress?: (p: { message?: string }) => void) {
  const result = (await client.callTool({ name: "execute_code", arguments: { code } }, undefined, {
    timeout: 60_000,
    ...(onprogress ? { onprogress } : {}),
  })) as { structuredContent?: Envelope };
  return result.structuredContent as Envelope;
}

beforeAll(async () => {
  const target = { provider: "sqlite" as const, url: path.join(dir, "mcp-ui.db") };
  await deployMigrations(target);
  db = createDb(target);
  const user = await db.user.create({
    data: { username: "owner", displayName: "O", role: "admin", passwordHash: "x" },
  });
  engine = await startServerEngine({ db, ports: createPrismaPorts(db), actionTimeoutMs: 1_500 });
  const backend = createMcpBackend({ db, engine: async () => engine, publicUrl: "http://console.test" });
  handler = createMcpHttpHandler({
    db,
    backend,
    consoleUrl: "http://console.test",
    allowedOrigins: [],
    rateLimitPerMinute: 1000,
  });
  server = await serveFetchHandler(handler);
  apiKey = (await createApiKey(db, user.id, { name: "ui", mode: "default", modules: ["*"] })).key;
}, 120_000);

afterAll(async () => {
  await server?.close();
  await engine?.shutdown();
  await db?.$disconnect();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("toolstore/ui over MCP", () => {
  it("[MCP]: a client with form elicitation answers ui.ask, even after longer than the deadline", async () => {
    const asked: unknown[] = [];
    const client = await connect({ elicitation: { form: {} } }, async (params) => {
      asked.push(params);
      // Longer than the whole 1.5 s deadline: a person deciding is not the action's time.
      await new Promise((r) => setTimeout(r, 2_000));
      return { action: "accept", content: { answer: "Rome" } };
    });
    const envelope = await run(
      client,
      `import { ask, renderers } from "toolstore/ui";
export default async () => ({ pick: await ask({ question: "Which city?", choices: ["Oslo", "Rome"] }), who: await renderers({}) });`,
    );
    expect(envelope).toMatchObject({
      ok: true,
      result: {
        pick: "Rome",
        who: [{ kind: "mcp", label: 'MCP client "ui-probe" 2.0.0', renders: ["ask", "confirm"] }],
      },
    });
    expect(asked).toEqual([
      expect.objectContaining({
        message: "Which city?",
        requestedSchema: expect.objectContaining({
          properties: { answer: { type: "string", title: "Answer", enum: ["Oslo", "Rome"] } },
        }),
      }),
    ]);
    expect(envelope.calls.map((c) => [c.capability, c.category])).toEqual([
      ["ui.ask", "read"],
      ["ui.renderers", "read"],
    ]);
    await client.close();
  }, 30_000);

  it("[MCP]: while ui.ask waits for its answer, the request's admission slot serves the next request", async () => {
    // One MCP request at a time, and a slot is not released by time: only a yield frees it early.
    // Without the yield, the client's answer (a POST of its own) queues behind the request that
    // asked, and the test times out.
    const front: http.Server = createFrontServer({
      guard: createRequestGuard({ allowedOrigins: [] }),
      routes: { [MCP_PATH]: () => handler },
      fallback: (_req, res) => res.writeHead(404).end(),
      admission: {
        paths: new Set([MCP_PATH]),
        admission: createAdmission({ limit: 1, releaseAfterMs: 60_000 }),
      },
    });
    await new Promise<void>((resolve) => front.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(front.address() as AddressInfo).port}${MCP_PATH}`;
    let other: Promise<Envelope> | undefined;
    let otherDone = false;
    const asker = await connect(
      { elicitation: { form: {} } },
      async () => {
        other = run(bystander, "export default async () => 1;").then((envelope) => {
          otherDone = true;
          return envelope;
        });
        await Promise.race([other, new Promise((r) => setTimeout(r, 5_000))]);
        return { action: "accept", content: { answer: otherDone ? "after the other" : "before the other" } };
      },
      url,
    );
    const bystander = await connect({}, undefined, url);
    try {
      const envelope = await run(
        asker,
        `import { ask } from "toolstore/ui";
export default async () => await ask({ question: "Which first?" });`,
      );
      expect(envelope).toMatchObject({ ok: true, result: "after the other" });
      expect(await other).toMatchObject({ ok: true, result: 1 });
    } finally {
      await asker.close();
      await bystander.close();
      front.closeAllConnections();
      await new Promise((r) => front.close(r));
    }
  }, 30_000);

  it("[MCP]: ui.confirm over a client that declared elicitation: {}; an answer outside the choices is refused", async () => {
    const client = await connect({ elicitation: {} }, async (params): Promise<ElicitResult> => {
      const schema = (params as { requestedSchema: { properties: Record<string, unknown> } }).requestedSchema;
      if ("confirm" in schema.properties) return { action: "accept", content: { confirm: true } };
      return { action: "accept", content: { answer: "Paris" } };
    });
    const envelope = await run(
      client,
      `import { ask, confirm } from "toolstore/ui";
export default async () => {
  const sure = await confirm({ message: "Go on?" });
  try { await ask({ question: "Which?", choices: ["Oslo", "Rome"] }); return { sure }; }
  catch (e) { return { sure, error: e.error, message: e.message }; }
};`,
    );
    // Asked without the SDK's own form check (no `form` key): ours refuses "Paris".
    expect(envelope.result).toMatchObject({ sure: true, error: "bad_input" });
    expect((envelope.result as { message: string }).message).toMatch(/must be one of \["Oslo","Rome"\]/);
    await client.close();
  }, 30_000);

  it("[MCP]: a client without elicitation gets client_required naming form elicitation", async () => {
    const client = await connect({});
    const envelope = await run(
      client,
      `import { ask, show } from "toolstore/ui";
export default async () => {
  const out = {};
  try { await ask({ question: "Which?" }); } catch (e) { out.ask = [e.error, e.message]; }
  try { await show({ markdown: "# hi" }); } catch (e) { out.show = [e.error, e.message]; }
  return out;
};`,
    );
    const result = envelope.result as { ask: string[]; show: string[] };
    expect(result.ask[0]).toBe("client_required");
    expect(result.ask[1]).toMatch(/form elicitation/);
    expect(result.ask[1]).toMatch(/MCP client "ui-probe" 2\.0\.0 \(renders nothing\)/);
    expect(result.show[0]).toBe("client_required");
    expect(result.show[1]).toMatch(/renders panes/);
    await client.close();
  }, 30_000);

  it("[MCP]: ui.progress arrives as an MCP progress notification", async () => {
    const client = await connect({});
    const messages: string[] = [];
    const envelope = await run(
      client,
      `import { progress } from "toolstore/ui";
export default async () => { await progress({ message: "halfway", fraction: 0.5 }); return "done"; };`,
      (p) => messages.push(p.message ?? ""),
    );
    expect(envelope).toMatchObject({ ok: true, result: "done" });
    expect(messages).toContain("halfway (50%)");
    await client.close();
  }, 30_000);

  it("[MCP]: toolstore://capabilities and the description list the libraries (no category) beside ui", async () => {
    const client = await connect({});
    const resource = await client.readResource({ uri: "toolstore://capabilities" });
    const doc = JSON.parse(String((resource.contents[0] as { text: string }).text)) as {
      modules: { module: string; exports: { name: string; category: string }[] }[];
      libraries: { module: string; kind: string; exports: { name: string; category?: string }[] }[];
    };
    expect(doc.libraries.map((l) => l.module)).toEqual([
      "toolstore/lib/yaml",
      "toolstore/lib/csv",
      "toolstore/lib/dates",
    ]);
    expect(doc.libraries.flatMap((l) => l.exports).some((e) => "category" in e)).toBe(false);
    const ui = doc.modules.find((m) => m.module === "toolstore/ui");
    expect(ui?.exports.map((e) => [e.name, e.category])).toEqual([
      ["show", "read"],
      ["ask", "read"],
      ["confirm", "read"],
      ["progress", "read"],
      ["renderers", "read"],
    ]);
    const { tools } = await client.listTools();
    const description = tools.find((t) => t.name === "execute_code")?.description ?? "";
    expect(description).toContain('"toolstore/lib/csv"');
    expect(description).toContain("parse(text: string, options?: CsvParseOptions): CsvResult");
    const envelope = await run(
      client,
      `import { parse } from "toolstore/lib/yaml"; export default async () => parse("a: [1, 2]");`,
    );
    expect(envelope).toMatchObject({ ok: true, result: { a: [1, 2] }, calls: [] });
    await client.close();
  }, 30_000);
});

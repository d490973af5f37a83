/**
 * The MCP mount end to end with the SDK's own Client: real HTTP on loopback, a real SQLite
 * database, the real engine and the example toolsets. Two handlers over one database stand in
 * for two instances behind a load balancer.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Db } from "../db";
import { deployMigrations } from "../db/migrate";
import { createPrismaPorts, type ServerEngine, startServerEngine } from "../engine";
import { createEventBus, type EventBus } from "../infra/events";
import { syncToolsetsFolder } from "../modules/toolsets";
import { createApiKey, KEY_CACHE_MS, revokeApiKey } from "../services/api-keys";
import { createMcpHttpHandler } from "./http";
import { createMcpBackend } from "./mcp-backend";
import { serveFetchHandler } from "./node-adapter";

const execFileAsync = promisify(execFile);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolstore-mcp-"));
let db: Db;
let bus: EventBus;
let engine: ServerEngine;
let servers: { url: string; close(): Promise<void> }[] = [];
let userId: string;
let otherUserId: string;

const urlOf = (i: number) => servers[i]?.url ?? "";

async function key(mode: "plan" | "default" | "auto", owner = () => userId, modules = ["*"]) {
  return (await createApiKey(db, owner(), { name: `test-${mode}`, mode, modules })).key;
}

async function connect(
  url: string,
  apiKey: string,
  options: { elicitation?: (decision: string) => void } = {},
) {
  const client = new Client(
    { name: "vitest", version: "1.0.0" },
    options.elicitation ? { capabilities: { elicitation: {} } } : {},
  );
  if (options.elicitation) {
    const answer = options.elicitation;
    client.setRequestHandler(ElicitRequestSchema, async () => {
      answer("asked");
      return { action: "accept", content: { decision: "deny" } };
    });
  }
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${apiKey}` } },
  });
  await client.connect(transport);
  return { client, transport };
}

type ToolResult = {
  structuredContent?: Record<string, unknown>;
  content: { type: string; text?: string; data?: string; mimeType?: string }[];
  isError?: boolean;
};

async function run(client: Client, code: string): Promise<ToolResult> {
  return (await client.callTool({ name: "execute_code", arguments: { code } }, undefined, {
    timeout: 60_000,
  })) as ToolResult;
}

beforeAll(async () => {
  const target = { provider: "sqlite" as const, url: path.join(dir, "mcp.db") };
  await deployMigrations(target);
  db = createDb(target);
  bus = createEventBus(db, { pollMs: 50 });
  userId = (
    await db.user.create({ data: { username: "owner", displayName: "O", role: "admin", passwordHash: "x" } })
  ).id;
  otherUserId = (
    await db.user.create({ data: { username: "other", displayName: "X", role: "viewer", passwordHash: "x" } })
  ).id;
  const sync = await syncToolsetsFolder(db, path.resolve("toolsets"));
  expect(sync.failed).toEqual([]);
  engine = await startServerEngine({ db, ports: createPrismaPorts(db), approvalTtlMs: 60_000 });
  const backend = createMcpBackend({ db, engine: async () => engine, publicUrl: "http://console.test" });
  const options = {
    db,
    backend,
    consoleUrl: "http://console.test",
    allowedOrigins: [],
    rateLimitPerMinute: 1000,
  };
  // Two "instances": separate handlers, nothing shared but the database.
  servers = [
    await serveFetchHandler(createMcpHttpHandler(options)),
    await serveFetchHandler(createMcpHttpHandler(options)),
  ];
}, 120_000);

afterAll(async () => {
  for (const s of servers) await s.close();
  await engine?.shutdown();
  bus?.close();
  await db?.$disconnect();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("MCP over Streamable HTTP", () => {
  it("[MCP]: lists exactly two tools, with the contract and the mounted signatures in the description", async () => {
    const { client } = await connect(urlOf(0), await key("default", () => userId, ["calculator", "assets"]));
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["execute_code", "view_image"]);
    const description = tools.find((t) => t.name === "execute_code")?.description ?? "";
    expect(description).toContain("export default async function");
    expect(description).toContain('"toolstore/calculator"');
    expect(description).not.toContain('"toolstore/weather" —');
    await client.close();
  });

  it("[MCP]: refuses a request without a key (401 + WWW-Authenticate), a revoked key, and a foreign Origin (403)", async () => {
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const none = await fetch(urlOf(0), { method: "POST", headers, body });
    expect(none.status).toBe(401);
    // RFC 6750 section 3.1: no error code when no credentials came; the resource metadata says where to sign in.
    expect(none.headers.get("www-authenticate")).toMatch(
      /^Bearer .*resource_metadata="http:\/\/[^"]+\/\.well-known\/oauth-protected-resource\/api\/mcp"/,
    );
    expect(none.headers.get("www-authenticate")).not.toContain("invalid_token");
    const wrong = await fetch(urlOf(0), {
      method: "POST",
      headers: { ...headers, authorization: "Bearer tsk_nope" },
      body,
    });
    expect(wrong.headers.get("www-authenticate")).toMatch(/error="invalid_token"/);
    expect(await none.text()).toContain("keys create --name");

    const k = await createApiKey(db, userId, { name: "soon-revoked" });
    const { client } = await connect(urlOf(0), k.key);
    await revokeApiKey(db, k.id);
    await expect(client.listTools()).rejects.toThrow(/401|Unauthorized/);

    const good = await key("default");
    const foreign = await fetch(urlOf(0), {
      method: "POST",
      headers: { ...headers, authorization: `Bearer ${good}`, origin: "https://evil.example" },
      body,
    });
    expect(foreign.status).toBe(403);
  });

  it("[MCP]: refuses DNS rebinding, an untrusted X-Forwarded-Host, another scheme and userinfo in Origin (403)", async () => {
    const good = await key("default");
    const url = new URL(urlOf(0));
    const self = `127.0.0.1:${url.port}`;
    const post = (headers: Record<string, string>) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const body = JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-06-18",
            capabilities: {},
            clientInfo: { name: "raw", version: "1" },
          },
        });
        const request = http.request(
          url,
          {
            method: "POST",
            headers: {
              "content-type": "application/json",
              accept: "application/json, text/event-stream",
              authorization: `Bearer ${good}`,
              ...headers,
            },
          },
          (res) => {
            let text = "";
            res.on("data", (chunk) => {
              text += chunk;
            });
            res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
          },
        );
        request.on("error", reject);
        request.end(body);
      });
    const rebinding = await post({
      host: `evil.example:${url.port}`,
      origin: `http://evil.example:${url.port}`,
    });
    expect(rebinding.status).toBe(403);
    expect(rebinding.body).toContain("evil.example");
    expect(
      (await post({ host: self, "x-forwarded-host": "evil.example", origin: "http://evil.example" })).status,
    ).toBe(403);
    expect((await post({ host: self, origin: `https://${self}` })).status).toBe(403);
    expect((await post({ host: self, origin: `http://evil@${self}` })).status).toBe(403);
    expect((await post({ host: self, origin: `http://${self}` })).status).toBe(200);
    expect((await post({ host: `localhost:${url.port}` })).status).toBe(200);
  });

  it("[MCP]: refuses a body over the size limit", async () => {
    const big = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { code: "x".repeat(1_100_000) },
    });
    const res = await fetch(urlOf(0), {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${await key("default")}`,
      },
      body: big,
    });
    expect(res.status).toBe(413);
  });

  it("[MCP]: execute_code calls a toolset binding and returns the envelope as text and structuredContent", async () => {
    const { client } = await connect(urlOf(0), await key("default"));
    const result = await run(
      client,
      `import { evaluate } from "toolstore/calculator";
       export default async function () { return await evaluate({ expression: "2 * (3 + 4)" }); }`,
    );
    expect(result.isError).toBeFalsy();
    const envelope = result.structuredContent as {
      ok: boolean;
      result: unknown;
      calls: { capability: string; decision: string }[];
    };
    expect(envelope.ok).toBe(true);
    expect(JSON.stringify(envelope.result)).toContain("14");
    expect(envelope.calls[0]).toMatchObject({ capability: "calculator.evaluate", decision: "allow" });
    expect(JSON.parse(result.content[0]?.text ?? "{}").ok).toBe(true);
    await client.close();
  });

  it("[MCP]: plan-mode blocks and deny rules come back as results the agent can read", async () => {
    const plan = await connect(urlOf(0), await key("plan"));
    const blocked = await run(
      plan.client,
      `import { save } from "toolstore/assets";
       export default async function () {
         try { return await save({ data_base64: "iVBORw0KGgo=" }); } catch (e) { return { error: e.error, capability: e.capability }; }
       }`,
    );
    // Plan mode is a dry run: the write is planned, not run.
    expect(blocked.structuredContent?.result).toEqual({ planned: true, capability: "assets.save", id: "p1" });
    await plan.client.close();

    const rule = await db.policyRule.create({
      data: { effect: "deny", pattern: "calculator.*", description: "test" },
    });
    await new Promise((r) => setTimeout(r, 300)); // rules are re-read at most every 200 ms
    try {
      const auto = await connect(urlOf(1), await key("auto"));
      const denied = await run(
        auto.client,
        `import { evaluate } from "toolstore/calculator";
         export default async function () { return await evaluate({ expression: "1+1" }); }`,
      );
      expect(denied.isError).toBe(true);
      const envelope = denied.structuredContent as {
        ok: boolean;
        error: { kind: string; message: string };
        calls: { decision: string }[];
      };
      expect(envelope.error.kind).toBe("threw");
      expect(envelope.error.message).toContain("permission_denied");
      expect(envelope.calls[0]?.decision).toBe("deny");
      await auto.client.close();
    } finally {
      await db.policyRule.delete({ where: { id: rule.id } });
    }
  });

  it("[MCP]: view_image returns an image its owner saved, and nothing to another user's key", async () => {
    const { client } = await connect(urlOf(0), await key("auto"));
    const made = await run(
      client,
      `import { bar_chart } from "toolstore/chart";
       import { save } from "toolstore/assets";
       export default async function () {
         const png = await bar_chart({ title: "t", labels: ["a", "b"], values: [1, 2] });
         return await save({ data_base64: png.data_base64 });
       }`,
    );
    expect(made.structuredContent?.error).toBeUndefined();
    const assetId = (made.structuredContent as { result: { asset_id: string } }).result.asset_id;
    expect((made.structuredContent as { images: unknown[] }).images).toHaveLength(1);
    const image = (await client.callTool({
      name: "view_image",
      arguments: { asset_id: assetId },
    })) as ToolResult;
    expect(image.content[0]).toMatchObject({ type: "image", mimeType: "image/png" });
    expect(
      Buffer.from(image.content[0]?.data ?? "", "base64")
        .subarray(1, 4)
        .toString(),
    ).toBe("PNG");
    await client.close();

    const stranger = await connect(urlOf(1), await key("auto", () => otherUserId));
    const refused = (await stranger.client.callTool({
      name: "view_image",
      arguments: { asset_id: assetId },
    })) as ToolResult;
    expect(refused.isError).toBe(true);
    expect(refused.content[0]?.text).toContain("No image");
    await stranger.client.close();
  });

  it("[MCP]: the capabilities resource lists modules with their categories and schemas", async () => {
    const { client } = await connect(urlOf(0), await key("default"));
    const resource = await client.readResource({ uri: "toolstore://capabilities" });
    const doc = JSON.parse(String((resource.contents[0] as { text: string }).text)) as {
      modules: {
        module: string;
        exports: { capability: string; category: string; inputSchema: unknown }[];
      }[];
    };
    const all = doc.modules.flatMap((m) => m.exports);
    expect(all.find((e) => e.capability === "assets.save")?.category).toBe("write");
    expect(all.find((e) => e.capability === "lisp.run" || e.category === "execute")).toBeTruthy();
    expect(new Set(all.map((e) => e.category))).toEqual(new Set(["read", "write", "execute", "external"]));
    await client.close();
  });

  it("[MCP]: a call that asks waits; an approval given on another instance lets it finish, with progress carrying the console link", async () => {
    const { client } = await connect(urlOf(0), await key("default"));
    const progress: string[] = [];
    const pending = client.callTool(
      {
        name: "execute_code",
        arguments: {
          code: `import { save } from "toolstore/assets";
                 export default async function () { return await save({ data_base64: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==" }); }`,
        },
      },
      undefined,
      { timeout: 60_000, onprogress: (p) => progress.push(p.message ?? "") },
    );
    let approvalId: string | undefined;
    for (let i = 0; i < 100 && !approvalId; i++) {
      await new Promise((r) => setTimeout(r, 100));
      approvalId = (await db.approval.findFirst({ where: { status: "pending", capability: "assets.save" } }))
        ?.id;
    }
    expect(approvalId).toBeTruthy();
    // Decided by a console user through the engine, as the approvals queue does.
    await engine.approvals.decide({
      approvalId: approvalId as string,
      answer: "once",
      decidedBy: { userId, label: "owner" },
    });
    const result = (await pending) as ToolResult;
    expect(result.isError).toBeFalsy();
    expect((result.structuredContent as { calls: { decision: string }[] }).calls[0]?.decision).toBe("allow");
    expect(progress.some((m) => m.includes(`http://console.test/approvals/${approvalId}`))).toBe(true);
    await client.close();
  });

  it("[MCP]: the client's own prompt can deny its request but a key can never approve it", async () => {
    const asked: string[] = [];
    const apiKey = await key("default");
    const { client } = await connect(urlOf(0), apiKey, { elicitation: (d) => asked.push(d) });
    const result = await run(
      client,
      `import { save } from "toolstore/assets";
       export default async function () {
         try { await save({ data_base64: "iVBORw0KGgo=" }); return "ran"; } catch (e) { return { error: e.error }; }
       }`,
    );
    expect(asked).toEqual(["asked"]);
    expect(result.structuredContent?.result).toEqual({ error: "permission_denied" });
    await client.close();

    // Forging an "approve" answer with the key changes nothing.
    const approval = await db.approval.findFirst({
      where: { capability: "assets.save", status: "denied" },
      orderBy: { createdAt: "desc" },
    });
    const backend = createMcpBackend({ db, engine: async () => engine, publicUrl: "http://console.test" });
    const identity = {
      id: approval?.apiKeyId ?? "",
      name: "x",
      userId,
      username: "owner",
      mode: "default" as const,
      modules: ["*"],
    };
    await expect(backend.answerFromClient(identity, approval?.id ?? "", "once")).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
  });

  it("[MCP]: a session initialized on one instance is served by another", async () => {
    const apiKey = await key("default");
    const { client, transport } = await connect(urlOf(0), apiKey);
    const sessionId = transport.sessionId;
    expect(sessionId).toBeTruthy();
    const row = await db.mcpSession.findUnique({ where: { id: sessionId as string } });
    expect(row?.clientName).toBe("vitest");
    const res = await fetch(urlOf(1), {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${apiKey}`,
        "mcp-session-id": sessionId as string,
        "mcp-protocol-version": transport.protocolVersion ?? "2025-06-18",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/list" }),
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("execute_code");
    await client.close();
  });

  it("[MCP]: a session its client left open lets go of its server once idle, and its next call builds it again", async () => {
    const handler = createMcpHttpHandler({
      db,
      backend: createMcpBackend({ db, engine: async () => engine, publicUrl: "http://console.test" }),
      consoleUrl: "http://console.test",
      allowedOrigins: [],
      rateLimitPerMinute: 1000,
      sessionServerIdleMs: 400,
    });
    const served = await serveFetchHandler(handler);
    try {
      const apiKey = await key("default");
      const sessions = await Promise.all([1, 2, 3].map(() => connect(served.url, apiKey)));
      const call = async (client: Client) =>
        (await client.callTool({
          name: "execute_code",
          arguments: { code: "export default async function () { return 6 * 7; }" },
        })) as ToolResult;
      for (const { client } of sessions) expect((await call(client)).isError).toBeFalsy();
      expect(handler.sessionServersHeld()).toBe(3);
      // Nobody closes the sessions (a client that crashed); no new session comes either.
      await expect.poll(() => handler.sessionServersHeld(), { timeout: 5_000, interval: 100 }).toBe(0);
      const [first] = sessions;
      const again = await call(first?.client as Client);
      expect(again.isError).toBeFalsy();
      expect(JSON.parse(again.content[0]?.text ?? "{}")).toMatchObject({ ok: true, result: 42 });
      expect(handler.sessionServersHeld()).toBe(1);
      for (const { client } of sessions) await client.close();
    } finally {
      await served.close();
    }
  });
});

describe("independent clients", () => {
  it("[MCP]: the MCP Inspector's CLI lists the tools and calls execute_code", async () => {
    const apiKey = await key("default");
    const cli = path.resolve("node_modules/@modelcontextprotocol/inspector-cli/build/index.js");
    const common = [cli, urlOf(0), "--transport", "http", "--header", `Authorization: Bearer ${apiKey}`];
    // The CLI finds its own package.json relative to the working directory (a packaging quirk).
    const cwd = path.dirname(cli);
    const list = await execFileAsync(process.execPath, [...common, "--method", "tools/list"], { cwd });
    expect(
      JSON.parse(list.stdout)
        .tools.map((t: { name: string }) => t.name)
        .sort(),
    ).toEqual(["execute_code", "view_image"]);
    const code = `import { convert } from "toolstore/units"; export default async function () { return await convert({ value: 1, from: "km", to: "m" }); }`;
    const call = await execFileAsync(
      process.execPath,
      [...common, "--method", "tools/call", "--tool-name", "execute_code", "--tool-arg", `code=${code}`],
      { cwd },
    );
    const result = JSON.parse(call.stdout);
    expect(result.structuredContent.ok).toBe(true);
    expect(JSON.stringify(result.structuredContent.result)).toContain("1000");
  }, 60_000);

  it("[MCP]: `npm run toolstore -- mcp` serves the same two tools over stdio with TOOLSTORE_API_KEY", async () => {
    const apiKey = await key("default");
    const transport = new StdioClientTransport({
      command: "npm",
      args: ["run", "toolstore", "--", "mcp"],
      cwd: path.resolve("."),
      env: {
        ...(process.env as Record<string, string>),
        DATABASE_URL: `file:${path.join(dir, "mcp.db")}`,
        TOOLSTORE_API_KEY: apiKey,
      },
      stderr: "pipe",
    });
    const client = new Client({ name: "stdio-test", version: "1.0.0" });
    await client.connect(transport);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["execute_code", "view_image"]);
    const result = await run(
      client,
      `import { evaluate } from "toolstore/calculator";
       export default async function () { return await evaluate({ expression: "6*7" }); }`,
    );
    expect(JSON.stringify(result.structuredContent?.result)).toContain("42");
    await client.close();
  }, 90_000);

  it("[MCP]: stdio refuses to start without a valid key, saying how to make one", async () => {
    const out = await execFileAsync("npm", ["run", "toolstore", "--", "mcp"], {
      env: {
        ...process.env,
        DATABASE_URL: `file:${path.join(dir, "mcp.db")}`,
        TOOLSTORE_API_KEY: "tsk_wrong",
      },
    }).catch((error: { code: number; stdout: string; stderr: string }) => error);
    expect((out as { code: number }).code).toBe(1);
    expect((out as { stdout: string }).stdout).toBe("");
    expect((out as { stderr: string }).stderr).toContain("keys create --name");
  }, 60_000);
});

describe("cancellation", () => {
  it("[MCP]: a client that disconnects while its call waits cancels the run; the request expires", async () => {
    const apiKey = await key("default");
    const { client } = await connect(urlOf(0), apiKey);
    const call = client
      .callTool(
        {
          name: "execute_code",
          arguments: {
            code: `import { save } from "toolstore/assets";
                   export default async function () { return await save({ data_base64: "iVBORw0KGgo=", name: "cancel-me" }); }`,
          },
        },
        undefined,
        { timeout: 60_000 },
      )
      .catch(() => "closed");
    let approvalId: string | undefined;
    for (let i = 0; i < 100 && !approvalId; i++) {
      await new Promise((r) => setTimeout(r, 100));
      approvalId = (
        await db.approval.findFirst({
          where: { status: "pending", apiKeyId: { not: null } },
          orderBy: { createdAt: "desc" },
        })
      )?.id;
    }
    expect(approvalId).toBeTruthy();
    await client.close(); // the HTTP connection goes away, as when an agent process dies
    expect(await call).toBe("closed");
    let status = "pending";
    for (let i = 0; i < 50 && status === "pending"; i++) {
      await new Promise((r) => setTimeout(r, 100));
      status = (await db.approval.findUnique({ where: { id: approvalId as string } }))?.status ?? "missing";
    }
    expect(status).toBe("expired");
  });

  it("[MCP]: a session's requests share one server, yet a dropped request cancels only its own run", async () => {
    const apiKey = await key("default");
    const { client, transport } = await connect(urlOf(0), apiKey);
    const code = (name: string) => `import { save } from "toolstore/assets";
      export default async function () { return await save({ data_base64: "iVBORw0KGgo=", name: "${name}" }); }`;
    const waitingFor = async (name: string) => {
      for (let i = 0; i < 100; i++) {
        const row = await db.approval.findFirst({
          where: { status: "pending", argsSnapshot: { contains: name } },
        });
        if (row) return row.id;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`no approval for ${name}`);
    };
    const kept = client
      .callTool({ name: "execute_code", arguments: { code: code("kept-call") } }, undefined, {
        timeout: 60_000,
      })
      .catch(() => "closed");
    const keptApproval = await waitingFor("kept-call");
    // The same session's second call, on an HTTP request of its own that the client then drops.
    const dropped = new AbortController();
    const raw = fetch(urlOf(0), {
      method: "POST",
      signal: dropped.signal,
      headers: {
        authorization: `Bearer ${apiKey}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": transport.sessionId as string,
        "mcp-protocol-version": transport.protocolVersion as string,
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: "raw-1",
        method: "tools/call",
        params: { name: "execute_code", arguments: { code: code("dropped-call") } },
      }),
    }).catch(() => "aborted");
    const droppedApproval = await waitingFor("dropped-call");
    dropped.abort();
    await raw;
    let status = "pending";
    for (let i = 0; i < 50 && status === "pending"; i++) {
      await new Promise((r) => setTimeout(r, 100));
      status = (await db.approval.findUnique({ where: { id: droppedApproval } }))?.status ?? "missing";
    }
    expect(status).toBe("expired");
    // The sibling call of the same session still waits for its human.
    expect((await db.approval.findUnique({ where: { id: keptApproval } }))?.status).toBe("pending");
    await client.close();
    expect(await kept).toBe("closed");
  });

  it("[MCP]: a session's server follows a change of its key's mounted modules", async () => {
    const { key: apiKey, id } = await createApiKey(db, userId, {
      name: "modules-change",
      mode: "default",
      modules: ["calculator"],
    });
    const { client } = await connect(urlOf(0), apiKey);
    const toolDescription = async () =>
      (await client.listTools()).tools.find((t) => t.name === "execute_code")?.description ?? "";
    expect(await toolDescription()).toContain("toolstore/calculator");
    expect(await toolDescription()).not.toContain("toolstore/units");
    await db.apiKey.update({ where: { id }, data: { modules: JSON.stringify(["units"]) } });
    await new Promise((r) => setTimeout(r, KEY_CACHE_MS + 1_100));
    const after = await toolDescription();
    expect(after).toContain("toolstore/units");
    expect(after).not.toContain("toolstore/calculator");
    await client.close();
  });
});

/**
 * ToolStore as the OAuth client of an upstream MCP server built here with the SDK's own server
 * auth support (mcpAuthRouter + requireBearerAuth over express, a provider that keeps its codes and
 * tokens in memory and rotates refresh tokens). The admin's sign-in at the upstream is its
 * authorization endpoint answering with a redirect to ToolStore's callback, which the test follows.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import type { OAuthRegisteredClientsStore } from "@modelcontextprotocol/sdk/server/auth/clients.js";
import { InvalidGrantError, InvalidTokenError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import { requireBearerAuth } from "@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js";
import type {
  AuthorizationParams,
  OAuthServerProvider,
} from "@modelcontextprotocol/sdk/server/auth/provider.js";
import {
  getOAuthProtectedResourceMetadataUrl,
  mcpAuthRouter,
} from "@modelcontextprotocol/sdk/server/auth/router.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { OAuthClientInformationFull, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
// @ts-expect-error express (the SDK's server auth runs on it) ships no types in this install
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createEngine, type Engine } from "../../core/actions/engine";
import { builtinModules } from "../../core/capabilities/builtins";
import { testSession } from "../../core/testing/fixtures";
import { createMemoryPorts } from "../../core/testing/memory-ports";
import { createDb, type Db } from "../../db";
import { deployMigrations } from "../../db/migrate";
import { createCapabilityCategoryLookup } from "../../services/capability-categories";
import {
  categorizeTools,
  createMcpModuleSource,
  getServer,
  type McpModuleSource,
  parseCategorizeRule,
  saveServer,
} from "./index";
import {
  completeUpstreamAuthorization,
  startUpstreamAuthorization,
  upstreamOAuthState,
} from "./upstream-oauth";

const dir = mkdtempSync(path.join(tmpdir(), "toolstore-upstream-oauth-"));
const ORIGIN = "http://127.0.0.1:3999";

/** What the upstream's token endpoint saw. */
const seen = { refreshes: [] as { resource?: string }[], codes: [] as { resource?: string }[] };
const expiresIn = 3600;
let refusingRefresh = false;

function createProvider(): OAuthServerProvider {
  const clients = new Map<string, OAuthClientInformationFull>();
  const codes = new Map<string, { client: string; params: AuthorizationParams }>();
  const access = new Map<string, { client: string; expiresAt: number; resource?: URL }>();
  const refresh = new Map<string, string>();
  const clientsStore: OAuthRegisteredClientsStore = {
    getClient: (id) => clients.get(id),
    registerClient: (client) => {
      const full = {
        ...client,
        client_id: randomUUID(),
        client_id_issued_at: Math.floor(Date.now() / 1000),
      } as OAuthClientInformationFull;
      clients.set(full.client_id, full);
      return full;
    },
  };
  const issue = (client: string, resource?: URL): OAuthTokens => {
    const token = randomUUID();
    const next = randomUUID();
    access.set(token, { client, expiresAt: Date.now() + expiresIn * 1000, resource });
    refresh.set(next, client);
    return { access_token: token, token_type: "bearer", expires_in: expiresIn, refresh_token: next };
  };
  return {
    clientsStore,
    async authorize(client, params, res) {
      // The user signs in and allows at once: the browser goes back with a code.
      const code = randomUUID();
      codes.set(code, { client: client.client_id, params });
      const back = new URL(params.redirectUri);
      back.searchParams.set("code", code);
      if (params.state) back.searchParams.set("state", params.state);
      res.redirect(302, back.toString());
    },
    async challengeForAuthorizationCode(_client, code) {
      const entry = codes.get(code);
      if (!entry) throw new InvalidGrantError("unknown code");
      return entry.params.codeChallenge;
    },
    async exchangeAuthorizationCode(client, code, _verifier, _redirect, resource) {
      const entry = codes.get(code);
      if (!entry || entry.client !== client.client_id) throw new InvalidGrantError("unknown code");
      codes.delete(code);
      seen.codes.push({ resource: resource?.href });
      return issue(client.client_id, resource);
    },
    async exchangeRefreshToken(client, token, _scopes, resource) {
      seen.refreshes.push({ resource: resource?.href });
      if (refusingRefresh || refresh.get(token) !== client.client_id)
        throw new InvalidGrantError("refresh token revoked");
      refresh.delete(token); // rotated: a second use fails
      return issue(client.client_id, resource);
    },
    async verifyAccessToken(token) {
      const entry = access.get(token);
      if (!entry || entry.expiresAt < Date.now()) throw new InvalidTokenError("expired or unknown token");
      return {
        token,
        clientId: entry.client,
        scopes: [],
        expiresAt: Math.floor(entry.expiresAt / 1000),
        resource: entry.resource,
      };
    },
  };
}

let db: Db;
let engine: Engine;
let source: McpModuleSource;
let upstream: Server;
let base = "";

beforeAll(async () => {
  const target = { provider: "sqlite" as const, url: path.join(dir, "u.db") };
  await deployMigrations(target);
  db = createDb(target);
  const app = express();
  upstream = app.listen(0, "127.0.0.1");
  await new Promise<void>((r) => upstream.once("listening", () => r()));
  base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  const provider = createProvider();
  const mcpUrl = new URL(`${base}/mcp`);
  app.use(
    mcpAuthRouter({
      provider,
      issuerUrl: new URL(base),
      resourceServerUrl: mcpUrl,
      scopesSupported: ["notes"],
    }),
  );
  app.post(
    "/mcp",
    express.json(),
    requireBearerAuth({
      verifier: provider,
      resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl),
    }),
    async (req: IncomingMessage & { body: unknown }, res: ServerResponse) => {
      const server = new McpServer({ name: "oauth-notes", version: "1" });
      server.registerTool(
        "whoami",
        {
          description: "Who is calling.",
          inputSchema: { n: z.number() },
          annotations: { readOnlyHint: true },
        },
        async ({ n }, extra) => ({
          content: [{ type: "text", text: JSON.stringify({ client: extra.authInfo?.clientId, n }) }],
        }),
      );
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on("close", () => void transport.close());
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    },
  );
  const ports = createMemoryPorts();
  source = createMcpModuleSource({ db, assets: ports.assets, idleMs: 60_000 });
  engine = createEngine({
    ports,
    instanceId: "upstream-oauth-test",
    modules: [builtinModules()],
    sources: [source],
    categories: createCapabilityCategoryLookup(db),
    approvalPollMs: 10,
    poolOptions: { workers: 1 },
  });
  await saveServer(db, { name: "notes", transport: "http", url: mcpUrl.href });
}, 60_000);

afterAll(async () => {
  await engine?.close();
  await new Promise((r) => upstream?.close(r));
  await db?.$disconnect();
  rmSync(dir, { recursive: true, force: true });
});

const CALL = `import { whoami } from "toolstore/notes";
export default async function () { return await whoami({ n: 7 }); }`;

async function run() {
  const { envelope } = await engine.run({ code: CALL, session: testSession({ mode: "auto" }) });
  return envelope;
}

/** The admin presses Authorize, signs in at the upstream, and the browser comes back. */
async function authorize() {
  const url = await startUpstreamAuthorization(db, "notes", { origin: ORIGIN, username: "alice" });
  const asked = new URL(url);
  expect(asked.origin).toBe(base);
  expect(asked.searchParams.get("code_challenge_method")).toBe("S256");
  expect(asked.searchParams.get("resource")).toBe(`${base}/mcp`);
  const res = await fetch(url, { redirect: "manual" });
  const back = new URL(res.headers.get("location") ?? "");
  expect(`${back.origin}${back.pathname}`).toBe(`${ORIGIN}/oauth/upstream/callback`);
  return completeUpstreamAuthorization(db, back.searchParams, { origin: ORIGIN });
}

describe("[MCP SERVERS] OAuth upstream", () => {
  it("a server that answers 401 with resource metadata is unauthorized until an admin authorizes; then its tool runs", async () => {
    await expect(source.refresh("notes")).rejects.toThrow(/Authorize/);
    expect((await getServer(db, "notes")).status).toBe("unauthorized");
    expect(await authorize()).toBe("notes");
    expect(seen.codes.at(-1)?.resource).toBe(`${base}/mcp`);
    await source.refresh("notes");
    await categorizeTools(db, "notes", [parseCategorizeRule("*=proposed")], null);
    engine.registry.invalidate();
    const env = await run();
    expect(env.ok, JSON.stringify(env)).toBe(true);
    expect(JSON.stringify(env.result)).toContain('"n":7');
    const state = await upstreamOAuthState(db, "notes");
    expect(state).toMatchObject({
      authorized: true,
      issuer: `${base}/`,
      needsReauth: false,
      authorizedBy: "alice",
    });
    // Sealed at rest, never as written.
    const row = await db.mcpServerOAuth.findFirst();
    expect(row?.accessToken).toMatch(/^tsb1:/);
    expect(row?.refreshToken).toMatch(/^tsb1:/);
  }, 60_000);

  it("a token about to expire is refreshed once, with the resource, before the next call", async () => {
    const before = seen.refreshes.length;
    // The issued token is inside the refresh margin: the next call refreshes first.
    await db.mcpServerOAuth.updateMany({ data: { expiresAt: new Date(Date.now() + 5_000) } });
    await source.refresh("notes");
    const results = await Promise.all([run(), run(), run()]);
    for (const env of results) expect(env.ok, JSON.stringify(env)).toBe(true);
    expect(seen.refreshes.length - before).toBe(1);
    expect(seen.refreshes.at(-1)?.resource).toBe(`${base}/mcp`);
    const state = await upstreamOAuthState(db, "notes");
    expect(state?.lastRefreshAt).not.toBeNull();
    expect(state?.expiresAt?.getTime()).toBeGreaterThan(Date.now() + 60 * 60_000 - 60_000);
  }, 60_000);

  it("a refused refresh marks the server for reauthorization; calls say so; authorizing again clears it", async () => {
    refusingRefresh = true;
    await db.mcpServerOAuth.updateMany({ data: { expiresAt: new Date(Date.now() - 1_000) } });
    await source.refresh("notes").catch(() => undefined);
    const env = await run();
    expect(env.ok).toBe(false);
    expect(JSON.stringify(env)).toMatch(/authorized again.*Authorize/);
    const state = await upstreamOAuthState(db, "notes");
    expect(state?.needsReauth).toBe(true);
    expect(state?.lastError).toContain("refresh at");
    refusingRefresh = false;
    await authorize();
    await source.refresh("notes");
    engine.registry.invalidate();
    expect((await run()).ok).toBe(true);
    expect((await upstreamOAuthState(db, "notes"))?.needsReauth).toBe(false);
  }, 60_000);
});

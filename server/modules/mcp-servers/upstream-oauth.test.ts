/**
 * ToolStore as the OAuth client of an upstream MCP server built with the SDK's own server auth
 * support (testing/oauth-upstream.ts: mcpAuthRouter + requireBearerAuth over express, a provider
 * that keeps its codes and tokens in memory and rotates refresh tokens). The admin's sign-in at the upstream is its
 * authorization endpoint answering with a redirect to ToolStore's callback, which the test follows.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
import { type OAuthUpstream, startOAuthUpstream } from "./testing/oauth-upstream";
import {
  completeUpstreamAuthorization,
  startUpstreamAuthorization,
  upstreamOAuthState,
} from "./upstream-oauth";

const dir = mkdtempSync(path.join(tmpdir(), "toolstore-upstream-oauth-"));
const ORIGIN = "http://127.0.0.1:3999";

let db: Db;
let engine: Engine;
let source: McpModuleSource;
let upstream: OAuthUpstream;
let base = "";

beforeAll(async () => {
  const target = { provider: "sqlite" as const, url: path.join(dir, "u.db") };
  await deployMigrations(target);
  db = createDb(target);
  upstream = await startOAuthUpstream();
  base = upstream.base;
  const mcpUrl = upstream.mcpUrl;
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
  await upstream?.close();
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
    expect(upstream.seen.codes.at(-1)?.resource).toBe(`${base}/mcp`);
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
    const before = upstream.seen.refreshes.length;
    // The issued token is inside the refresh margin: the next call refreshes first.
    await db.mcpServerOAuth.updateMany({ data: { expiresAt: new Date(Date.now() + 5_000) } });
    await source.refresh("notes");
    const results = await Promise.all([run(), run(), run()]);
    for (const env of results) expect(env.ok, JSON.stringify(env)).toBe(true);
    expect(upstream.seen.refreshes.length - before).toBe(1);
    expect(upstream.seen.refreshes.at(-1)?.resource).toBe(`${base}/mcp`);
    const state = await upstreamOAuthState(db, "notes");
    expect(state?.lastRefreshAt).not.toBeNull();
    expect(state?.expiresAt?.getTime()).toBeGreaterThan(Date.now() + 60 * 60_000 - 60_000);
  }, 60_000);

  it("a token that lives 30 s is refreshed once half of it is spent, not on every call", async () => {
    const before = upstream.seen.refreshes.length;
    // Just issued, 30 s to live: inside the one-minute margin, but not yet half spent.
    await db.mcpServerOAuth.updateMany({
      data: { expiresAt: new Date(Date.now() + 30_000), lastRefreshAt: new Date() },
    });
    await source.refresh("notes");
    for (let i = 0; i < 3; i++) expect((await run()).ok).toBe(true);
    expect(upstream.seen.refreshes.length - before).toBe(0);
    // Two thirds spent: the next call refreshes, once, and the new token is used at once.
    await db.mcpServerOAuth.updateMany({
      data: { expiresAt: new Date(Date.now() + 10_000), lastRefreshAt: new Date(Date.now() - 20_000) },
    });
    await source.refresh("notes");
    for (let i = 0; i < 2; i++) expect((await run()).ok).toBe(true);
    expect(upstream.seen.refreshes.length - before).toBe(1);
  }, 60_000);

  it("a refused refresh marks the server for reauthorization; calls say so; authorizing again clears it", async () => {
    upstream.refuseRefresh(true);
    await db.mcpServerOAuth.updateMany({ data: { expiresAt: new Date(Date.now() - 1_000) } });
    await source.refresh("notes").catch(() => undefined);
    const env = await run();
    expect(env.ok).toBe(false);
    expect(JSON.stringify(env)).toMatch(/authorized again.*Authorize/);
    const state = await upstreamOAuthState(db, "notes");
    expect(state?.needsReauth).toBe(true);
    expect(state?.lastError).toContain("refresh at");
    upstream.refuseRefresh(false);
    await authorize();
    await source.refresh("notes");
    engine.registry.invalidate();
    expect((await run()).ok).toBe(true);
    expect((await upstreamOAuthState(db, "notes"))?.needsReauth).toBe(false);
  }, 60_000);
});

/**
 * /api/mcp as an OAuth 2.1 protected resource with ToolStore as its own authorization server,
 * driven by the MCP SDK's own client OAuth support (`auth()` with an OAuthClientProvider, then the
 * Streamable HTTP transport with that provider) over real loopback HTTP, a real database and the
 * real engine. The user's consent is given through the same functions the consent route calls
 * (the page itself is driven in Chromium by e2e/oauth.spec.ts). Two handlers over one database
 * stand in for two instances; SQLite always, PostgreSQL too when TOOLSTORE_TEST_POSTGRES_URL is set.
 */
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import {
  auth,
  type OAuthClientProvider,
  refreshAuthorization,
} from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { calculatePKCECodeChallenge, generateRandomCodeVerifier } from "oauth4webapi";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Db } from "../db";
import { deployMigrations } from "../db/migrate";
import { pgConfigFromUrl } from "../db/provider";
import { createPrismaPorts, type ServerEngine, startServerEngine } from "../engine";
import { syncToolsetsFolder } from "../modules/toolsets";
import { createApiKey, listApiKeys } from "../services/api-keys";
import { approveAuthorization, checkAuthorizationRequest } from "../services/oauth/authorize";
import { REGISTRATIONS_PER_HOUR } from "../services/oauth/clients";
import { createOAuthEndpoints } from "../services/oauth/endpoints";
import { listGrants, revokeGrantById } from "../services/oauth/grants";
import { type OAuthSite, oauthSite } from "../services/oauth/site";
import { createMcpHttpHandler } from "./http";
import { createMcpBackend } from "./mcp-backend";
import { serveFetchHandler } from "./node-adapter";

const REDIRECT = "http://127.0.0.1:8976/callback";

/** An in-memory OAuthClientProvider, as an MCP client keeps one; consent happens in `consent`. */
class MemoryProvider implements OAuthClientProvider {
  info?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = "";
  lastAuthorizationUrl?: URL;
  constructor(
    private consent: (url: URL) => Promise<void>,
    readonly name = "Vitest Agent",
  ) {}
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.name,
      redirect_uris: [REDIRECT],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  async redirectToAuthorization(url: URL) {
    this.lastAuthorizationUrl = url;
    await this.consent(url);
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

interface Instance {
  db: Db;
  engine: ServerEngine;
  url: string;
  site: OAuthSite;
  close(): Promise<void>;
}

function routes(db: Db, siteOf: (req: Request) => OAuthSite, mcp: (req: Request) => Promise<Response>) {
  const endpoints = createOAuthEndpoints(db, siteOf);
  return async (req: Request): Promise<Response> => {
    const { pathname } = new URL(req.url);
    if (pathname.startsWith("/.well-known/oauth-protected-resource")) return endpoints.resourceMetadata(req);
    if (pathname === "/.well-known/oauth-authorization-server") return endpoints.serverMetadata(req);
    if (pathname === "/oauth/register") return endpoints.register(req);
    if (pathname === "/oauth/token") return endpoints.token(req);
    if (pathname === "/oauth/revoke") return endpoints.revoke(req);
    if (pathname === "/api/mcp") return mcp(req);
    return new Response("not found", { status: 404 });
  };
}

async function execute(client: Client, code: string) {
  const result = (await client.callTool({ name: "execute_code", arguments: { code } }, undefined, {
    timeout: 60_000,
  })) as { structuredContent?: Record<string, unknown> };
  return result.structuredContent as {
    ok: boolean;
    result?: unknown;
    error?: { kind: string; message: string };
    calls: { capability: string; decision: string }[];
  };
}

const ADD = `import { evaluate } from "toolstore/calculator";
export default async function () { return (await evaluate({ expression: "2 + 3" })).value; }`;
const WEATHER = `import { get_weather } from "toolstore/weather";
export default async function () { return await get_weather({ location: "Oslo" }); }`;
const WEBHOOK = `import { send } from "toolstore/webhook";
export default async function () { return await send({ event: "x.y", data: 1 }); }`;

function suite(
  label: string,
  makeTarget: () => Promise<{ target: Parameters<typeof createDb>[0]; drop(): Promise<void> }>,
) {
  describe(label, () => {
    const instances: Instance[] = [];
    let drop: () => Promise<void> = async () => {};
    let adminId = "";
    let viewerId = "";
    const a = () => instances[0] as Instance;
    const b = () => instances[1] as Instance;
    const mcpUrl = (i: Instance) => `${i.url}/api/mcp`;

    beforeAll(async () => {
      const made = await makeTarget();
      drop = made.drop;
      await deployMigrations(made.target);
      let firstOrigin = "";
      for (let i = 0; i < 2; i++) {
        const db = createDb(made.target);
        if (i === 0) {
          adminId = (
            await db.user.create({
              data: { username: "alice", displayName: "Alice", role: "admin", passwordHash: "x" },
            })
          ).id;
          viewerId = (
            await db.user.create({
              data: { username: "vera", displayName: "Vera", role: "viewer", passwordHash: "x" },
            })
          ).id;
          expect((await syncToolsetsFolder(db, path.resolve("toolsets"))).failed).toEqual([]);
        }
        const engine = await startServerEngine({
          db,
          ports: createPrismaPorts(db),
          approvalTtlMs: 60_000,
          workers: 1,
        });
        // Instance 0 answers for whatever origin it is reached at; instance 1 is configured with
        // instance 0's public URL, as instances behind one load balancer are (TOOLSTORE_PUBLIC_URL).
        const origin = firstOrigin;
        const siteOf = (req: Request) => oauthSite(origin || new URL(req.url).origin);
        const mcp = createMcpHttpHandler({
          db,
          backend: createMcpBackend({ db, engine: async () => engine, publicUrl: "http://console.test" }),
          consoleUrl: "http://console.test",
          allowedOrigins: [],
          rateLimitPerMinute: 100_000,
          siteOf,
        });
        const served = await serveFetchHandler(routes(db, siteOf, mcp), null);
        const url = served.url.replace(/\/api\/mcp$/, "").replace(/\/$/, "");
        if (i === 0) firstOrigin = url;
        instances.push({ db, engine, url, site: oauthSite(firstOrigin), close: served.close });
      }
    }, 120_000);

    afterAll(async () => {
      for (const i of instances) {
        await i.close();
        await i.engine.shutdown();
        await i.db.$disconnect();
      }
      await drop();
    });

    /** Consent as the console's consent route gives it, for the signed-in `userId`. */
    function consentAs(
      userId: string,
      role: "admin" | "viewer",
      mode: "plan" | "default" | "auto",
      modules: string[],
      codes: string[],
    ) {
      return async (url: URL) => {
        expect(url.origin).toBe(a().url);
        expect(url.pathname).toBe("/oauth/authorize");
        const check = await checkAuthorizationRequest(a().db, a().site, url.searchParams);
        if (!check.ok) throw new Error(check.message);
        const back = new URL(
          await approveAuthorization(a().db, a().site, check.request, { userId, role, mode, modules }),
        );
        expect(back.searchParams.get("state")).toBe(url.searchParams.get("state"));
        expect(back.searchParams.get("iss")).toBe(a().site.issuer);
        codes.push(back.searchParams.get("code") ?? "");
      };
    }

    async function signIn(provider: MemoryProvider, codes: string[], serverUrl = mcpUrl(a())) {
      expect(await auth(provider, { serverUrl })).toBe("REDIRECT");
      expect(await auth(provider, { serverUrl, authorizationCode: codes.at(-1) ?? "" })).toBe("AUTHORIZED");
    }

    async function connectWith(provider: OAuthClientProvider, url: string) {
      const client = new Client({ name: "oauth-vitest", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: provider }));
      return client;
    }

    it("[OAUTH]: a 401 names the resource metadata; the metadata documents describe the server", async () => {
      const res = await fetch(mcpUrl(a()), {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
      expect(res.status).toBe(401);
      const challenge = res.headers.get("www-authenticate") ?? "";
      expect(challenge).toContain(
        `resource_metadata="${a().url}/.well-known/oauth-protected-resource/api/mcp"`,
      );
      const prm = await (await fetch(`${a().url}/.well-known/oauth-protected-resource/api/mcp`)).json();
      expect(prm).toMatchObject({ resource: mcpUrl(a()), authorization_servers: [a().url] });
      const asm = await (await fetch(`${a().url}/.well-known/oauth-authorization-server`)).json();
      expect(asm).toMatchObject({
        issuer: a().url,
        code_challenge_methods_supported: ["S256"],
        client_id_metadata_document_supported: true,
        registration_endpoint: `${a().url}/oauth/register`,
      });
    });

    it("[OAUTH]: the SDK client registers, signs in and runs execute_code; the grant's mode and modules apply", async () => {
      const codes: string[] = [];
      const provider = new MemoryProvider(
        consentAs(adminId, "admin", "plan", ["calculator", "webhook"], codes),
      );
      await signIn(provider, codes);
      expect(provider.info?.client_id).toMatch(/^tsc_/);
      expect(provider.lastAuthorizationUrl?.searchParams.get("resource")).toBe(mcpUrl(a()));
      expect(provider.lastAuthorizationUrl?.searchParams.get("code_challenge_method")).toBe("S256");
      const client = await connectWith(provider, mcpUrl(a()));
      const sum = await execute(client, ADD);
      expect(sum.ok).toBe(true);
      expect(sum.result).toBe(5);
      // Not mounted for this grant: refused before anything runs.
      const weather = await execute(client, WEATHER);
      expect(weather.ok).toBe(false);
      expect(weather.error?.kind).toBe("refused");
      // Plan mode: the write call does not run.
      const hook = await execute(client, WEBHOOK);
      expect(hook.calls[0]?.capability).toBe("webhook.send");
      expect(hook.calls[0]?.decision).not.toMatch(/^allow/);
      await client.close();

      const grants = await listGrants(a().db);
      const grant = grants.find((g) => g.clientId === provider.info?.client_id);
      expect(grant).toMatchObject({
        clientName: "Vitest Agent",
        owner: "alice",
        mode: "plan",
        modules: ["calculator", "webhook"],
      });
      expect(grant?.lastUsedAt).not.toBeNull();
      // The grant's key row is not an API key anyone can use, and the keys list does not show it.
      expect((await listApiKeys(a().db)).map((k) => k.name)).not.toContain("Vitest Agent");
      // Only hashes are stored.
      const stored = await a().db.oAuthToken.findMany({ where: { grantId: grant?.id } });
      expect(stored.map((t) => t.tokenHash)).not.toContain(provider.saved?.access_token);
    }, 120_000);

    it("[OAUTH]: a token for another resource is refused, and no token is issued for one", async () => {
      const codes: string[] = [];
      const provider = new MemoryProvider(consentAs(adminId, "admin", "auto", ["*"], codes));
      await signIn(provider, codes);
      const token = provider.saved?.access_token ?? "";
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
      const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
      const here = await fetch(mcpUrl(a()), {
        method: "POST",
        headers: { ...headers, authorization: `Bearer ${token}` },
        body,
      });
      expect(here.status).toBe(200);
      // The same instance reached under another name is another resource (audience).
      const other = mcpUrl(a()).replace("127.0.0.1", "localhost");
      const there = await fetch(other, {
        method: "POST",
        headers: { ...headers, authorization: `Bearer ${token}` },
        body,
      });
      expect(there.status).toBe(401);
      expect(there.headers.get("www-authenticate")).toContain('error="invalid_token"');
      expect(await there.text()).toContain(`the access token is for the resource ${mcpUrl(a())}`);
      // Refreshing for another resource: invalid_target.
      const refused = await fetch(`${a().url}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "refresh_token",
          refresh_token: provider.saved?.refresh_token ?? "",
          client_id: provider.info?.client_id ?? "",
          resource: "https://elsewhere.example/mcp",
        }),
      });
      expect(refused.status).toBe(400);
      expect(await refused.json()).toMatchObject({ error: "invalid_target" });
    }, 60_000);

    it("[OAUTH]: refresh rotates the token; a reused refresh token revokes the grant on every instance", async () => {
      const codes: string[] = [];
      const provider = new MemoryProvider(consentAs(adminId, "admin", "auto", ["*"], codes));
      await signIn(provider, codes);
      const first = provider.saved as OAuthTokens;
      const metadata = await (await fetch(`${a().url}/.well-known/oauth-authorization-server`)).json();
      const clientInformation = provider.info as OAuthClientInformationMixed;
      const second = await refreshAuthorization(a().url, {
        metadata,
        clientInformation,
        refreshToken: first.refresh_token ?? "",
        resource: new URL(mcpUrl(a())),
      });
      expect(second.refresh_token).toBeTruthy();
      expect(second.refresh_token).not.toBe(first.refresh_token);
      provider.saveTokens(second);
      const client = await connectWith(provider, mcpUrl(b()));
      expect((await execute(client, ADD)).result).toBe(5);
      await expect(
        refreshAuthorization(a().url, {
          metadata,
          clientInformation,
          refreshToken: first.refresh_token ?? "",
          resource: new URL(mcpUrl(a())),
        }),
      ).rejects.toThrow(/already used/);
      // The grant is gone: instance 1's next call is refused, and the newer refresh token is dead.
      await expect(execute(client, ADD)).rejects.toThrow();
      const grant = (await listGrants(a().db)).find((g) => g.clientId === clientInformation.client_id);
      expect(grant?.revokedReason).toBe("refresh_token_reused");
      await expect(
        refreshAuthorization(a().url, {
          metadata,
          clientInformation,
          refreshToken: second.refresh_token ?? "",
          resource: new URL(mcpUrl(a())),
        }),
      ).rejects.toThrow(/revoked/);
      await client.close().catch(() => {});
    }, 120_000);

    it("[OAUTH]: revoking a grant in the console stops its next call on another instance; RFC 7009 revocation too", async () => {
      const codes: string[] = [];
      const provider = new MemoryProvider(consentAs(adminId, "admin", "auto", ["*"], codes), "Revoked Agent");
      await signIn(provider, codes);
      const client = await connectWith(provider, mcpUrl(b()));
      expect((await execute(client, ADD)).result).toBe(5);
      const grant = (await listGrants(a().db)).find((g) => g.clientName === "Revoked Agent");
      await revokeGrantById(a().db, grant?.id ?? "");
      await expect(execute(client, ADD)).rejects.toThrow();
      await client.close().catch(() => {});

      const codes2: string[] = [];
      const second = new MemoryProvider(
        consentAs(adminId, "admin", "auto", ["*"], codes2),
        "Self-revoking Agent",
      );
      await signIn(second, codes2);
      const res = await fetch(`${a().url}/oauth/revoke`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          token: second.saved?.refresh_token ?? "",
          client_id: second.info?.client_id ?? "",
        }),
      });
      expect(res.status).toBe(200);
      const after = await fetch(mcpUrl(a()), {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          authorization: `Bearer ${second.saved?.access_token}`,
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
      expect(after.status).toBe(401);
    }, 120_000);

    it("[OAUTH]: PKCE S256 only, exact redirect match, single-use codes, and a viewer grants at most plan", async () => {
      const reg = await fetch(`${a().url}/oauth/register`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          client_name: "Manual",
          redirect_uris: [REDIRECT],
          token_endpoint_auth_method: "none",
        }),
      });
      expect(reg.status).toBe(201);
      const clientId = ((await reg.json()) as { client_id: string }).client_id;
      const verifier = generateRandomCodeVerifier();
      const base = {
        client_id: clientId,
        redirect_uri: REDIRECT,
        response_type: "code",
        state: "s1",
        code_challenge: await calculatePKCECodeChallenge(verifier),
        code_challenge_method: "S256",
        resource: mcpUrl(a()),
      };
      const check = (over: Record<string, string>) =>
        checkAuthorizationRequest(a().db, a().site, new URLSearchParams({ ...base, ...over }));
      const plain = await check({ code_challenge_method: "plain", code_challenge: verifier.slice(0, 43) });
      expect(plain).toMatchObject({ ok: false });
      expect(plain.ok === false && plain.redirect).toContain("error=invalid_request");
      const mismatch = await check({ redirect_uri: `${REDIRECT}/` });
      expect(mismatch).toMatchObject({ ok: false, redirect: null });
      const foreign = await check({ resource: "https://elsewhere.example/mcp" });
      expect(foreign.ok === false && foreign.redirect).toContain("error=invalid_target");

      const good = await check({});
      if (!good.ok) throw new Error(good.message);
      await expect(
        approveAuthorization(a().db, a().site, good.request, {
          userId: viewerId,
          role: "viewer",
          mode: "auto",
          modules: ["*"],
        }),
      ).rejects.toThrow(/at most mode plan/);
      const back = new URL(
        await approveAuthorization(a().db, a().site, good.request, {
          userId: viewerId,
          role: "viewer",
          mode: "plan",
          modules: ["*"],
        }),
      );
      const exchange = (code: string, v = verifier) =>
        fetch(`${a().url}/oauth/token`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({
            grant_type: "authorization_code",
            code,
            code_verifier: v,
            client_id: clientId,
            redirect_uri: REDIRECT,
            resource: mcpUrl(a()),
          }),
        });
      const code = back.searchParams.get("code") ?? "";
      const wrongVerifier = await exchange(code, generateRandomCodeVerifier());
      expect(await wrongVerifier.json()).toMatchObject({ error: "invalid_grant" });
      // That attempt used the code up; a fresh consent, then a replay of its code.
      const again = new URL(
        await approveAuthorization(a().db, a().site, good.request, {
          userId: viewerId,
          role: "viewer",
          mode: "plan",
          modules: ["*"],
        }),
      );
      const ok = await exchange(again.searchParams.get("code") ?? "");
      expect(ok.status).toBe(200);
      const tokens = (await ok.json()) as OAuthTokens;
      const replay = await exchange(again.searchParams.get("code") ?? "");
      expect(await replay.json()).toMatchObject({ error: "invalid_grant" });
      const res = await fetch(mcpUrl(a()), {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          authorization: `Bearer ${tokens.access_token}`,
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
      expect(res.status).toBe(401);
    }, 60_000);

    it("[OAUTH]: registration limits: redirect URIs, body size, auth methods, registrations per hour", async () => {
      const register = (body: unknown) =>
        fetch(`${a().url}/oauth/register`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        });
      const many = await register({
        redirect_uris: Array.from({ length: 11 }, (_, i) => `https://x.example/cb${i}`),
      });
      expect(await many.json()).toMatchObject({ error: "invalid_redirect_uri" });
      const insecure = await register({ redirect_uris: ["http://evil.example/cb"] });
      expect((await insecure.json()).error_description).toContain("use https");
      const fragment = await register({ redirect_uris: ["https://x.example/cb#frag"] });
      expect(await fragment.json()).toMatchObject({ error: "invalid_redirect_uri" });
      const huge = await register({
        redirect_uris: ["https://x.example/cb"],
        client_name: "x".repeat(20_000),
      });
      expect(huge.status).toBe(413);
      const jwt = await register({
        redirect_uris: ["https://x.example/cb"],
        token_endpoint_auth_method: "private_key_jwt",
      });
      expect(await jwt.json()).toMatchObject({ error: "invalid_client_metadata" });
      const confidential = await register({
        redirect_uris: ["https://x.example/cb"],
        client_name: "Server app",
        token_endpoint_auth_method: "client_secret_post",
      });
      const info = (await confidential.json()) as { client_id: string; client_secret?: string };
      expect(info.client_secret).toMatch(/^tscs_/);
      const row = await a().db.oAuthClient.findUnique({ where: { id: info.client_id } });
      expect(row?.metadata).not.toContain(info.client_secret);
      // Without its secret, the client is refused at the token endpoint.
      const noSecret = await fetch(`${a().url}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "refresh_token",
          refresh_token: "tsrt_x",
          client_id: info.client_id,
        }),
      });
      expect(noSecret.status).toBe(401);
      const count = await a().db.oAuthClient.count({ where: { kind: "registered" } });
      await a().db.oAuthClient.createMany({
        data: Array.from({ length: REGISTRATIONS_PER_HOUR - count }, (_, i) => ({
          id: `tsc_fill${i}`,
          kind: "registered",
          name: "f",
          redirectUris: "[]",
        })),
      });
      const limited = await register({ redirect_uris: ["https://x.example/cb"] });
      expect(limited.status).toBe(429);
      await a().db.oAuthClient.deleteMany({ where: { id: { startsWith: "tsc_fill" } } });
    });

    it("[OAUTH]: a client ID metadata document is fetched, checked and limited", async () => {
      const docs = new Map<string, unknown>();
      const server = http.createServer((req, res) => {
        const doc = docs.get(req.url ?? "");
        if (doc === undefined) return void res.writeHead(404).end();
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(typeof doc === "string" ? doc : JSON.stringify(doc));
      });
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      const port = (server.address() as AddressInfo).port;
      const id = (p: string) => `http://127.0.0.1:${port}${p}`;
      docs.set("/good.json", {
        client_id: id("/good.json"),
        client_name: "Doc Client",
        redirect_uris: [REDIRECT],
      });
      docs.set("/liar.json", { client_id: "https://someone.else/client.json", redirect_uris: [REDIRECT] });
      docs.set(
        "/big.json",
        JSON.stringify({ client_id: id("/big.json"), redirect_uris: [REDIRECT], pad: "x".repeat(20_000) }),
      );
      const params = (clientId: string) =>
        new URLSearchParams({
          client_id: clientId,
          redirect_uri: REDIRECT,
          response_type: "code",
          code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
          code_challenge_method: "S256",
        });
      const good = await checkAuthorizationRequest(a().db, a().site, params(id("/good.json")));
      expect(good).toMatchObject({
        ok: true,
        request: { client: { name: "Doc Client", kind: "metadata_document" } },
      });
      const liar = await checkAuthorizationRequest(a().db, a().site, params(id("/liar.json")));
      expect(liar).toMatchObject({ ok: false, redirect: null });
      expect(liar.ok === false && liar.message).toContain("client_id must be exactly");
      const big = await checkAuthorizationRequest(a().db, a().site, params(id("/big.json")));
      expect(big.ok === false && big.message).toContain("larger than 16 KiB");
      const missing = await checkAuthorizationRequest(a().db, a().site, params(id("/none.json")));
      expect(missing.ok === false && missing.message).toContain("HTTP 404");
      server.close();
    });

    it("[OAUTH]: API keys keep working beside OAuth", async () => {
      const { key } = await createApiKey(a().db, adminId, { name: "classic", mode: "auto", modules: ["*"] });
      const client = new Client({ name: "key-client", version: "1.0.0" });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(mcpUrl(b())), {
          requestInit: { headers: { Authorization: `Bearer ${key}` } },
        }),
      );
      expect((await execute(client, ADD)).result).toBe(5);
      await client.close();
    }, 60_000);
  });
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolstore-oauth-"));
suite("OAuth authorization server over SQLite (two instances, one database)", async () => ({
  target: { provider: "sqlite", url: path.join(dir, "oauth.db") },
  drop: async () => fs.rmSync(dir, { recursive: true, force: true }),
}));

const pgBase = process.env.TOOLSTORE_TEST_POSTGRES_URL;
if (pgBase) {
  suite("OAuth authorization server over PostgreSQL (two instances, one database)", async () => {
    const name = `toolstore_oauth_${randomUUID().replace(/-/g, "").slice(0, 12)}`;
    const admin = new pg.Client(pgConfigFromUrl(pgBase));
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name}"`);
    const u = new URL(pgBase);
    u.pathname = `/${name}`;
    return {
      target: { provider: "postgresql", url: u.toString() },
      drop: async () => {
        await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
        await admin.end();
      },
    };
  });
}

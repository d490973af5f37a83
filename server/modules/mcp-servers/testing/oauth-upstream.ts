/**
 * An upstream MCP server that needs OAuth, built with the MCP SDK's own server auth support
 * (mcpAuthRouter + requireBearerAuth over express): dynamic registration, authorization code with
 * PKCE, refresh tokens rotated on each use, tokens bound to the resource. Its one tool, `whoami`,
 * says which client called. Tests start it on loopback; `interactive` makes its authorization
 * endpoint a sign-in page with an "Allow ToolStore" link (for a browser) instead of an instant
 * redirect back.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
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
import { z } from "zod";

export interface OAuthUpstream {
  /** http://127.0.0.1:<port>, the issuer. */
  base: string;
  /** The MCP endpoint (the protected resource). */
  mcpUrl: URL;
  /** What the token endpoint saw: each code exchange and refresh, with its `resource`. */
  seen: { codes: { resource?: string }[]; refreshes: { resource?: string }[] };
  /** While on, every refresh is refused (invalid_grant), as when the upstream revoked the grant. */
  refuseRefresh(on: boolean): void;
  close(): Promise<void>;
}

const escapeHtml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

function createProvider(
  upstream: Pick<OAuthUpstream, "seen">,
  options: { expiresIn: number; interactive: boolean },
  refusing: () => boolean,
): OAuthServerProvider {
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
    access.set(token, { client, expiresAt: Date.now() + options.expiresIn * 1000, resource });
    refresh.set(next, client);
    return { access_token: token, token_type: "bearer", expires_in: options.expiresIn, refresh_token: next };
  };
  return {
    clientsStore,
    async authorize(client, params, res) {
      const code = randomUUID();
      codes.set(code, { client: client.client_id, params });
      const back = new URL(params.redirectUri);
      back.searchParams.set("code", code);
      if (params.state) back.searchParams.set("state", params.state);
      if (!options.interactive) {
        res.redirect(302, back.toString());
        return;
      }
      // The person signs in here (this test upstream knows one user) and allows the client.
      res
        .status(200)
        .type("html")
        .send(
          `<!doctype html><title>Sign in to oauth-notes</title><h1>Sign in to oauth-notes</h1>` +
            `<p>${escapeHtml(client.client_name ?? client.client_id)} asks to use your notes.</p>` +
            `<a href="${escapeHtml(back.toString())}">Allow ToolStore</a>`,
        );
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
      upstream.seen.codes.push({ resource: resource?.href });
      return issue(client.client_id, resource);
    },
    async exchangeRefreshToken(client, token, _scopes, resource) {
      upstream.seen.refreshes.push({ resource: resource?.href });
      if (refusing() || refresh.get(token) !== client.client_id)
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

export async function startOAuthUpstream(
  options: { expiresIn?: number; interactive?: boolean } = {},
): Promise<OAuthUpstream> {
  const app = express();
  const server: Server = app.listen(0, "127.0.0.1");
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const mcpUrl = new URL(`${base}/mcp`);
  let refusing = false;
  const upstream: OAuthUpstream = {
    base,
    mcpUrl,
    seen: { codes: [], refreshes: [] },
    refuseRefresh(on) {
      refusing = on;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const provider = createProvider(
    upstream,
    { expiresIn: options.expiresIn ?? 3600, interactive: options.interactive ?? false },
    () => refusing,
  );
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
      const mcp = new McpServer({ name: "oauth-notes", version: "1" });
      mcp.registerTool(
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
      await mcp.connect(transport);
      await transport.handleRequest(req, res, req.body);
    },
  );
  return upstream;
}

/**
 * The sign-in cookie's Secure flag through the auth router: it follows the scheme the request
 * guard trusts, so a client's own X-Forwarded-Proto makes no Secure cookie over plain http.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Db } from "../db";
import { createRequestGuard } from "../http/request-guard";
import { dropProcessSingleton, peekProcessSingleton, processSingleton } from "../infra/process-singletons";
import { createCaller } from "./root";
import { CSRF_HEADER } from "./trpc";

/** A sign-out as Next.js hands it over when the client claims https: req.url says https too. */
async function signOutCookie(): Promise<string> {
  const resHeaders = new Headers();
  const caller = createCaller({
    db: {} as Db,
    user: null,
    sessionToken: undefined,
    req: new Request("https://127.0.0.1:3000/api/trpc/auth.signOut", {
      method: "POST",
      headers: { host: "127.0.0.1:3000", "x-forwarded-proto": "https", [CSRF_HEADER]: "1" },
    }),
    resHeaders,
    engine: async () => {
      throw new Error("not used");
    },
  });
  await caller.auth.signOut();
  return resHeaders.get("set-cookie") ?? "";
}

function useGuard(trustProxy: boolean) {
  dropProcessSingleton("requestGuard", peekProcessSingleton("requestGuard"));
  processSingleton("requestGuard", () => createRequestGuard({ host: "127.0.0.1", port: 3000, trustProxy }));
}

afterEach(() => dropProcessSingleton("requestGuard", peekProcessSingleton("requestGuard")));

describe("session cookie: Secure", () => {
  it("[AUTH]: a client's X-Forwarded-Proto: https makes no Secure cookie without TOOLSTORE_TRUST_PROXY", async () => {
    useGuard(false);
    const cookie = await signOutCookie();
    expect(cookie).toContain("toolstore_session=");
    expect(cookie).not.toContain("Secure");
  });

  it("[AUTH]: behind a trusted proxy the forwarded https makes the cookie Secure", async () => {
    useGuard(true);
    expect(await signOutCookie()).toContain("; Secure");
  });
});

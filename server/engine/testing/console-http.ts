/**
 * The console's own HTTP path to a real server process (./durable-serve.ts), for tests: sign in
 * through `auth.signIn` (the session cookie), then call tRPC mutations as the browser does, with
 * the cookie and the CSRF header. A tRPC error becomes a thrown ConsoleError with its app code.
 */
import { CSRF_HEADER } from "../../api/trpc";

export class ConsoleError extends Error {
  constructor(
    message: string,
    readonly appCode: string | undefined,
    readonly status: number,
  ) {
    super(message);
    this.name = "ConsoleError";
  }
}

async function post(origin: string, path: string, input: unknown, cookie?: string): Promise<Response> {
  return fetch(`${origin}/api/trpc/${path}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      [CSRF_HEADER]: "1",
      ...(cookie ? { cookie } : {}),
    },
    body: JSON.stringify(input),
  });
}

async function resultOf<T>(res: Response, path: string): Promise<T> {
  const body = (await res.json()) as {
    result?: { data?: T };
    error?: { message?: string; data?: { appCode?: string } };
  };
  if (body.error || !res.ok) {
    throw new ConsoleError(
      `${path}: ${body.error?.message ?? `HTTP ${res.status}`}`,
      body.error?.data?.appCode,
      res.status,
    );
  }
  return body.result?.data as T;
}

/** Signs in on the server at `origin`; resolves with the session cookie (`name=value`). */
export async function consoleSignIn(origin: string, username: string, password: string): Promise<string> {
  const res = await post(origin, "auth.signIn", { username, password });
  await resultOf(res, "auth.signIn");
  const cookie = res.headers.getSetCookie()[0]?.split(";")[0];
  if (!cookie) throw new Error("auth.signIn set no session cookie");
  return cookie;
}

/** A tRPC mutation of the signed-in console user (`approvals.decide`, ...). */
export async function consoleMutation<T>(
  origin: string,
  cookie: string,
  path: string,
  input: unknown,
): Promise<T> {
  return resultOf<T>(await post(origin, path, input, cookie), path);
}

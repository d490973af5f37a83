/**
 * tRPC setup: context from the fetch request, AppError codes mapped once to tRPC codes, role
 * checks and the cross-site check for mutations. Routers only validate and call services.
 */
import { initTRPC, TRPCError } from "@trpc/server";
import type { FetchCreateContextFnOptions } from "@trpc/server/adapters/fetch";
import { ZodError } from "zod";
import { type AppError, type ErrorCode, isAppError } from "../core/errors";
import { type Db, getDb } from "../db";
import { getEngine, type ServerEngine } from "../engine";
import { getRequestGuard } from "../http/request-guard";
import { auditLogFor } from "../infra/audit-log";
import { auditedInput, auditTargetFor } from "../services/audit-targets";
import { type Role, roleAtLeast, SESSION_COOKIE, type SessionUser, sessionUser } from "../services/auth";
import { readCookie } from "./cookies";

export const CSRF_HEADER = "x-toolstore-csrf";

export interface Context {
  db: Db;
  user: SessionUser | null;
  sessionToken: string | undefined;
  req: Request;
  resHeaders: Headers;
  /** The process's engine, started on first use; a test's createCaller passes its own. */
  engine: () => Promise<ServerEngine>;
  /** Set over the live socket (server/api/live-socket.ts), whose context outlives one request. */
  live?: boolean;
}

export async function createContext(opts: FetchCreateContextFnOptions): Promise<Context> {
  const db = getDb();
  const token = readCookie(opts.req.headers.get("cookie"), SESSION_COOKIE);
  const user = await sessionUser(db, token);
  return { db, user, sessionToken: token, req: opts.req, resHeaders: opts.resHeaders, engine: getEngine };
}

const TRPC_CODE: Record<ErrorCode, TRPCError["code"]> = {
  BAD_INPUT: "BAD_REQUEST",
  NOT_FOUND: "NOT_FOUND",
  UNAUTHENTICATED: "UNAUTHORIZED",
  FORBIDDEN: "FORBIDDEN",
  CONFLICT: "CONFLICT",
  GATE_DENIED: "FORBIDDEN",
  GATE_BLOCKED_PLAN: "FORBIDDEN",
  CAPABILITY_UNKNOWN: "NOT_FOUND",
  CATEGORY_REQUIRED: "BAD_REQUEST",
  TOOLSET_INVALID: "BAD_REQUEST",
  SKILL_INVALID: "BAD_REQUEST",
  LIMIT_EXCEEDED: "TOO_MANY_REQUESTS",
  CLIENT_REQUIRED: "PRECONDITION_FAILED",
  CLIENT_TIMEOUT: "TIMEOUT",
  CLIENT_DECLINED: "CONFLICT",
  CONFIG_INVALID: "INTERNAL_SERVER_ERROR",
  INTERNAL: "INTERNAL_SERVER_ERROR",
};

export function toTRPCError(error: AppError): TRPCError {
  return new TRPCError({
    code: TRPC_CODE[error.code] ?? "INTERNAL_SERVER_ERROR",
    message: error.message,
    cause: error,
  });
}

const t = initTRPC.context<Context>().create({
  errorFormatter({ shape, error }) {
    const cause = error.cause;
    const appCode = isAppError(cause)
      ? cause.code
      : error.code === "UNAUTHORIZED"
        ? "UNAUTHENTICATED"
        : undefined;
    const details = isAppError(cause) ? cause.details : undefined;
    const zodIssues =
      cause instanceof ZodError ? cause.issues.map((i) => `${i.path.join(".")}: ${i.message}`) : undefined;
    return { ...shape, data: { ...shape.data, appCode, details, zodIssues, stack: undefined } };
  },
});

/** Turn AppErrors thrown by services into typed tRPC errors. */
const mapErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok && isAppError(result.error.cause)) {
    return { ...result, error: toTRPCError(result.error.cause) } as typeof result;
  }
  return result;
});

/**
 * Mutations must come from the console itself: a custom header (which a cross-site form or
 * simple request cannot set) and, when the browser sends one, an Origin of this site.
 */
const sameSite = t.middleware(({ ctx, type, next }) => {
  if (type !== "mutation") return next();
  if (ctx.req.headers.get(CSRF_HEADER) !== "1") {
    throw new TRPCError({
      code: "FORBIDDEN",
      message: `Cross-site request refused: missing ${CSRF_HEADER} header.`,
    });
  }
  const verdict = getRequestGuard().check(ctx.req);
  if (!verdict.ok) {
    throw new TRPCError({ code: "FORBIDDEN", message: `Cross-site request refused: ${verdict.reason}.` });
  }
  return next();
});

/**
 * The live socket carries subscriptions only, and its context was made when it connected: each
 * subscription reads the session again, so one signed out since then is refused like any other.
 */
const liveSocket = t.middleware(async ({ ctx, type, next }) => {
  if (!ctx.live) return next();
  if (type !== "subscription") {
    throw new TRPCError({
      code: "METHOD_NOT_SUPPORTED",
      message: "The live socket carries subscriptions only.",
    });
  }
  return next({ ctx: { ...ctx, user: await sessionUser(ctx.db, ctx.sessionToken) } });
});

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;
export const publicProcedure = t.procedure.use(mapErrors).use(liveSocket).use(sameSite);

function requireRole(min: Role) {
  return t.middleware(({ ctx, next }) => {
    if (!ctx.user) throw new TRPCError({ code: "UNAUTHORIZED", message: "Sign in to continue." });
    if (!roleAtLeast(ctx.user.role, min)) {
      throw new TRPCError({
        code: "FORBIDDEN",
        message: `This needs the ${min} role; you are ${ctx.user.role}.`,
      });
    }
    return next({ ctx: { ...ctx, user: ctx.user as SessionUser } });
  });
}

/**
 * Every mutation of an approver or admin goes into the audit log: who, which procedure, the
 * input (secret-looking values hidden), the outcome, and for known targets the state before and
 * after (server/services/audit-targets.ts). Nothing can be added to these procedures unaudited.
 */
const audited = t.middleware(async ({ ctx, type, path, getRawInput, next }) => {
  if (type !== "mutation" || !ctx.user) return next();
  const input = await getRawInput().catch(() => undefined);
  const target = auditTargetFor(ctx.db, path, input);
  const before = target ? await target.state().catch(() => null) : undefined;
  const result = await next();
  const after = target ? await target.state().catch(() => null) : undefined;
  await auditLogFor(ctx.db).append({
    actor: { type: "user", id: ctx.user.id, name: ctx.user.username },
    action: path,
    target: target?.target ?? "",
    before,
    after,
    detail: {
      input: auditedInput(input),
      outcome: result.ok ? "ok" : "error",
      ...(result.ok ? {} : { error: result.error.message.slice(0, 500) }),
    },
  });
  return result;
});

export const viewerProcedure = publicProcedure.use(requireRole("viewer"));
export const approverProcedure = publicProcedure.use(requireRole("approver")).use(audited);
export const adminProcedure = publicProcedure.use(requireRole("admin")).use(audited);

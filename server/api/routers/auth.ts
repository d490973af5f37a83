import { z } from "zod";
import { getRequestGuard } from "../../http/request-guard";
import {
  completeSetup,
  createSession,
  displayNameSchema,
  passwordSchema,
  SESSION_COOKIE,
  setupTokenValid,
  signIn,
  signOut,
  usernameSchema,
} from "../../services/auth";
import { sessionCookie } from "../cookies";
import { publicProcedure, router } from "../trpc";

function secureRequest(req: Request): boolean {
  return getRequestGuard().isHttps(req);
}

export const authRouter = router({
  me: publicProcedure.query(({ ctx }) => ctx.user),

  setupTokenValid: publicProcedure
    .input(z.object({ token: z.string().min(1) }))
    .query(({ ctx, input }) => setupTokenValid(ctx.db, input.token)),

  completeSetup: publicProcedure
    .input(
      z.object({
        token: z.string().min(1),
        username: usernameSchema,
        displayName: displayNameSchema,
        password: passwordSchema,
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const { userId } = await completeSetup(ctx.db, input);
      const session = await createSession(ctx.db, userId);
      ctx.resHeaders.append(
        "set-cookie",
        sessionCookie(SESSION_COOKIE, session.token, session.expiresAt, secureRequest(ctx.req)),
      );
      return { ok: true };
    }),

  signIn: publicProcedure
    .input(
      z.object({
        username: z.string().min(1, "username is required"),
        password: z.string().min(1, "password is required"),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const session = await signIn(ctx.db, input.username, input.password);
      ctx.resHeaders.append(
        "set-cookie",
        sessionCookie(SESSION_COOKIE, session.token, session.expiresAt, secureRequest(ctx.req)),
      );
      return { ok: true };
    }),

  signOut: publicProcedure.mutation(async ({ ctx }) => {
    if (ctx.sessionToken) await signOut(ctx.db, ctx.sessionToken);
    ctx.resHeaders.append("set-cookie", sessionCookie(SESSION_COOKIE, "", null, secureRequest(ctx.req)));
    return { ok: true };
  }),
});

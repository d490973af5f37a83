import { z } from "zod";
import {
  createUser,
  displayNameSchema,
  listUsers,
  passwordSchema,
  ROLES,
  setUserRole,
  usernameSchema,
} from "../../services/auth";
import { adminProcedure, router } from "../trpc";

export const usersRouter = router({
  list: adminProcedure.query(({ ctx }) => listUsers(ctx.db)),

  create: adminProcedure
    .input(
      z.object({
        username: usernameSchema,
        displayName: displayNameSchema,
        role: z.enum(ROLES),
        password: passwordSchema,
      }),
    )
    .mutation(({ ctx, input }) => createUser(ctx.db, input)),

  setRole: adminProcedure
    .input(z.object({ userId: z.string().min(1), role: z.enum(ROLES) }))
    .mutation(({ ctx, input }) => setUserRole(ctx.db, ctx.user.id, input.userId, input.role)),
});

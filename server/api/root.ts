import { apiKeysRouter } from "./routers/api-keys";
import { authRouter } from "./routers/auth";
import { eventsRouter } from "./routers/events";
import { usersRouter } from "./routers/users";
import { createCallerFactory, router } from "./trpc";

export const appRouter = router({
  auth: authRouter,
  apiKeys: apiKeysRouter,
  users: usersRouter,
  events: eventsRouter,
});

export type AppRouter = typeof appRouter;
export const createCaller = createCallerFactory(appRouter);

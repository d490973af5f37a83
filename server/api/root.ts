import { apiKeysRouter } from "./routers/api-keys";
import { authRouter } from "./routers/auth";
import { capabilitiesRouter } from "./routers/capabilities";
import { eventsRouter } from "./routers/events";
import { rulesRouter } from "./routers/rules";
import { toolsetsRouter } from "./routers/toolsets";
import { usersRouter } from "./routers/users";
import { createCallerFactory, router } from "./trpc";

export const appRouter = router({
  auth: authRouter,
  apiKeys: apiKeysRouter,
  users: usersRouter,
  events: eventsRouter,
  capabilities: capabilitiesRouter,
  rules: rulesRouter,
  toolsets: toolsetsRouter,
});

export type AppRouter = typeof appRouter;
export const createCaller = createCallerFactory(appRouter);

import { apiKeysRouter } from "./routers/api-keys";
import { approvalsRouter } from "./routers/approvals";
import { authRouter } from "./routers/auth";
import { capabilitiesRouter } from "./routers/capabilities";
import { eventsRouter } from "./routers/events";
import { mcpServersRouter } from "./routers/mcp-servers";
import { notificationsRouter } from "./routers/notifications";
import { playgroundRouter } from "./routers/playground";
import { rulesRouter } from "./routers/rules";
import { runsRouter } from "./routers/runs";
import { skillsRouter } from "./routers/skills";
import { toolsetsRouter } from "./routers/toolsets";
import { usersRouter } from "./routers/users";
import { createCallerFactory, router } from "./trpc";

export const appRouter = router({
  auth: authRouter,
  apiKeys: apiKeysRouter,
  users: usersRouter,
  events: eventsRouter,
  approvals: approvalsRouter,
  playground: playgroundRouter,
  runs: runsRouter,
  capabilities: capabilitiesRouter,
  rules: rulesRouter,
  toolsets: toolsetsRouter,
  mcpServers: mcpServersRouter,
  skills: skillsRouter,
  notifications: notificationsRouter,
});

export type AppRouter = typeof appRouter;
export const createCaller = createCallerFactory(appRouter);

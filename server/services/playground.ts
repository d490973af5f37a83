/**
 * The playground surface: the engine session of a console user, starting a run in the
 * background (the browser follows it through run-watch, so a long approval wait outlives any one
 * request), cancelling it, the editor's typings, and the last code kept per user.
 */

import { z } from "zod";
import type { Engine } from "../core/actions/engine";
import { renderLibraryTypings, renderModuleTypings } from "../core/actions/module-typings";
import { MODES, type Mode, type Session } from "../core/capabilities/types";
import { AppError } from "../core/errors";
import type { Db } from "../db";
import { latestEventSeq } from "../infra/events";
import { logger } from "../infra/log";
import { processSingleton } from "../infra/process-singletons";
import type { SessionUser } from "./auth";
import { getConsoleClients } from "./console-clients";

export const MAX_PLAYGROUND_CODE = 100_000;

export const playgroundStateSchema = z.object({
  code: z.string().max(MAX_PLAYGROUND_CODE),
  mode: z.enum(MODES),
});
export type PlaygroundState = z.infer<typeof playgroundStateSchema>;

export const playgroundRunSchema = z.object({
  code: z.string().trim().min(1, "write some code first").max(MAX_PLAYGROUND_CODE),
  mode: z.enum(MODES),
  title: z.string().trim().max(200).optional(),
  /** The tab's client id (its `playground.client` stream): `toolstore/ui` calls go to it. */
  clientId: z.string().min(8).max(100).optional(),
});

export const playgroundAnswerSchema = z.object({
  clientId: z.string().min(8).max(100),
  promptId: z.string().min(1).max(100),
  answer: z.unknown().optional(),
  decline: z.boolean().optional(),
});

export const playgroundPlanSchema = z.object({
  /** The plan's id: the plan-mode run's id (its envelope's plan.id). */
  planId: z.string().trim().min(1, "name the plan to run").max(200),
  /** The mode the approved plan runs in (plan mode runs it in default). */
  mode: z.enum(MODES),
});

export function playgroundSession(user: SessionUser, mode: Mode): Session {
  return {
    id: user.sessionId,
    userId: user.id,
    surface: "playground",
    mode,
    mountedModules: ["*"],
    actorLabel: `${user.username} (playground)`,
  };
}

const settingKey = (userId: string) => `playground:${userId}`;

export async function getPlaygroundState(db: Db, userId: string): Promise<PlaygroundState | null> {
  const row = await db.setting.findUnique({ where: { key: settingKey(userId) }, select: { value: true } });
  if (!row) return null;
  try {
    const parsed = playgroundStateSchema.safeParse(JSON.parse(row.value));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

export async function savePlaygroundState(db: Db, userId: string, state: PlaygroundState): Promise<void> {
  const value = JSON.stringify(state);
  await db.setting.upsert({
    where: { key: settingKey(userId) },
    create: { key: settingKey(userId), value },
    update: { value },
  });
}

/** Module list and Monaco declarations for what a playground session may import. */
export async function playgroundModules(engine: Engine, user: SessionUser) {
  const modules = await engine.registry.mountedModules(playgroundSession(user, "default"));
  const libraries = engine.libraries.list();
  return {
    typings: `${renderModuleTypings(modules)}\n${renderLibraryTypings(libraries)}`,
    libraries: libraries.map((l) => ({
      name: l.name,
      description: l.description,
      builtOn: l.builtOn,
      exports: l.exports.map((e) => ({ name: e.name, description: e.description, signature: e.signature })),
    })),
    modules: modules.map((m) => ({
      name: m.name,
      description: m.description,
      source: m.source,
      exports: m.exports.map((e) => ({
        name: e.name,
        exportName: e.exportName,
        category: e.spec.category,
        description: e.spec.description,
      })),
    })),
  };
}

interface ActiveRun {
  userId: string;
  controller: AbortController;
}

const activeRuns = processSingleton("playgroundRuns", () => new Map<string, ActiveRun>());

/** A title for the runs list: the code's first line comment, else "Playground". */
export function titleFromCode(code: string): string {
  const first = code.split("\n").find((l) => l.trim() !== "");
  const comment = first?.trim().match(/^\/\/\s*(.+)$/)?.[1];
  return (comment ?? "Playground").slice(0, 120);
}

/**
 * Starts the action and returns as soon as it has a run id, with the event seq to follow it
 * from. The run goes on after the request ends; its envelope lands in ActionRun.
 */
export async function startPlaygroundRun(
  db: Db,
  engine: Engine,
  user: SessionUser,
  input: z.infer<typeof playgroundRunSchema>,
): Promise<{ runId: string; afterSeq: number }> {
  const afterSeq = await latestEventSeq(db);
  await savePlaygroundState(db, user.id, { code: input.code, mode: input.mode });
  const controller = new AbortController();
  let runId: string | undefined;
  let onStarted: (id: string) => void = () => {};
  const started = new Promise<string>((resolve) => {
    onStarted = resolve;
  });
  const finished = engine
    .run({
      code: input.code,
      title: input.title || titleFromCode(input.code),
      session: playgroundSession(user, input.mode),
      signal: controller.signal,
      ...(input.clientId
        ? {
            client: getConsoleClients().router(input.clientId, user.id, `playground tab of ${user.username}`),
          }
        : {}),
      onEvent: (event) => {
        if (event.type === "run.started" && !runId) {
          runId = event.runId;
          activeRuns.set(runId, { userId: user.id, controller });
          onStarted(runId);
        }
      },
    })
    .then((result) => result.runId)
    .finally(() => {
      if (runId) activeRuns.delete(runId);
    });
  // The result arrives through the outbox; only a failure before the run started matters here.
  finished.catch((error: unknown) => {
    if (runId)
      logger("playground").error(`playground: run ${runId} failed: ${(error as Error).message}`, {
        run_id: runId,
      });
  });
  return { runId: await Promise.race([started, finished]), afterSeq };
}

/**
 * Asks a human (the approval queue) for a plan as a whole, then runs the plan-mode run's code with
 * exactly those calls granted. Resolves once the approved run has started (the browser follows
 * it like any run); rejects when the plan is denied, expires or is not this user's.
 */
export async function startPlaygroundPlan(
  db: Db,
  engine: Engine,
  user: SessionUser,
  input: z.infer<typeof playgroundPlanSchema>,
): Promise<{ runId: string; afterSeq: number }> {
  const afterSeq = await latestEventSeq(db);
  const controller = new AbortController();
  let runId: string | undefined;
  let onStarted: (id: string) => void = () => {};
  const started = new Promise<string>((resolve) => {
    onStarted = resolve;
  });
  const finished = engine
    .runPlan({
      planId: input.planId,
      title: `Approved plan ${input.planId.slice(0, 8)}`,
      session: playgroundSession(user, input.mode),
      signal: controller.signal,
      onEvent: (event) => {
        if (event.type === "run.started" && !runId) {
          runId = event.runId;
          activeRuns.set(runId, { userId: user.id, controller });
          onStarted(runId);
        }
      },
    })
    .then((result) => result.runId)
    .finally(() => {
      if (runId) activeRuns.delete(runId);
    });
  finished.catch((error: unknown) => {
    if (runId) console.error(`playground: plan run ${runId} failed: ${(error as Error).message}`);
  });
  return { runId: await Promise.race([started, finished]), afterSeq };
}

/**
 * Stops a run of this user (or any run, for an admin), on whichever instance runs it: one started
 * here is aborted at once; another instance's run gets the cancel through the database (and the
 * instance channel on PostgreSQL). Either way its pending approvals expire at once.
 */
export async function cancelPlaygroundRun(
  db: Db,
  engine: Engine,
  user: SessionUser,
  runId: string,
): Promise<{ cancelled: true }> {
  const active = activeRuns.get(runId);
  const owner = active
    ? active.userId
    : (await db.actionRun.findUnique({ where: { id: runId }, select: { userId: true, status: true } }))
        ?.userId;
  if (owner === undefined) throw new AppError("NOT_FOUND", `run ${runId} does not exist`);
  if (owner !== user.id && user.role !== "admin") {
    throw new AppError("FORBIDDEN", "only the user who started a run (or an admin) can cancel it");
  }
  active?.controller.abort(new Error("cancelled from the playground"));
  if (!(await engine.cancel(runId)) && !active) {
    throw new AppError("NOT_FOUND", `run ${runId} is not running (it may have finished)`);
  }
  return { cancelled: true };
}

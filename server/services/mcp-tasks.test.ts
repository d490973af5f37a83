/**
 * endOrphanedTasks over the real Prisma store (SQLite): which open tasks it ends, and from what.
 * The process that ran them is stood in for by the rows it leaves; the kill -9 of a real server
 * with an SDK client polling tasks/get is in server/mcp/mcp-tasks-crash.test.ts.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createDb, type Db } from "../db";
import { deployMigrations } from "../db/migrate";
import { endOrphanedTasks, RUN_META_KEY, taskRunRequestId } from "./mcp-tasks";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolstore-task-orphans-"));
let db: Db;

beforeAll(async () => {
  const target = { provider: "sqlite" as const, url: path.join(dir, "tasks.db") };
  await deployMigrations(target);
  db = createDb(target);
});

afterAll(async () => {
  await db?.$disconnect();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function task(id: string, instanceId: string | null) {
  await db.mcpTask.create({ data: { id, apiKeyId: "key", instanceId, status: "input_required" } });
}

async function runOf(taskId: string, status: string, envelope: object | null) {
  return db.actionRun.create({
    data: {
      sessionId: "s",
      surface: "mcp",
      apiKeyId: "key",
      code: "",
      mode: "default",
      instanceId: "dead",
      status,
      mcpRequestId: taskRunRequestId(taskId),
      envelope: envelope ? JSON.stringify(envelope) : null,
    },
  });
}

it("ends only the open tasks of dead processes, each from what its run says", async () => {
  const finished = { ok: true, result: 7, logs: [], calls: [], images: [], durationMs: 5 };
  await task("finished", "dead");
  const finishedRun = await runOf("finished", "ok", finished);
  await task("still-running", "dead");
  await runOf("still-running", "running", null);
  await task("never-started", "dead");
  await task("alive", "alive");
  await task("mine", "self");
  await task("legacy", null);

  const liveness = { instanceId: "self", isInstanceAlive: (id: string) => id === "alive" || id === "self" };
  expect(await endOrphanedTasks(db, liveness)).toBe(2);

  const rows = Object.fromEntries(
    (
      await db.mcpTask.findMany({ select: { id: true, status: true, statusMessage: true, result: true } })
    ).map((r) => [r.id, r]),
  );
  // The action ended; the process died before the task took its result: the result is the run's.
  expect(rows.finished?.status).toBe("completed");
  expect(JSON.parse(rows.finished?.result ?? "{}")).toMatchObject({
    isError: false,
    structuredContent: finished,
    _meta: { [RUN_META_KEY]: finishedRun.id },
  });
  expect(rows["never-started"]).toMatchObject({ status: "failed" });
  expect(rows["never-started"]?.statusMessage).toContain("nothing ran");
  // The run's own recovery comes first; an alive process, this one, and unlinked rows are left alone.
  for (const id of ["still-running", "alive", "mine", "legacy"])
    expect(rows[id]?.status).toBe("input_required");

  // A task already ended is never rewritten.
  expect(await endOrphanedTasks(db, liveness)).toBe(0);
  expect((await db.mcpTask.findUnique({ where: { id: "finished" } }))?.status).toBe("completed");
});

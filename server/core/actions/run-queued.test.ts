/**
 * actions.run and the pool's fair share: a run that waits for a sandbox behind its own key's runs
 * is stored as `queued`, then `running`, and one key's queue never holds up another key's run.
 */
import { afterAll, expect, it } from "vitest";
import { createSandboxPool } from "../sandbox/pool";
import { sessionInMode } from "../testing/fixtures";
import { createMemoryPorts } from "../testing/memory-ports";
import { createEngine } from "./engine";

const pool = createSandboxPool({ workers: 1, maxRunsPerKey: 1 });
const ports = createMemoryPorts();
const engine = createEngine({ ports, instanceId: "test", modules: [], pool });
afterAll(async () => {
  await engine.close();
  await pool.close();
});

it("stores a run as queued while its key's cap is reached, then runs it", async () => {
  const seen: string[] = [];
  const setQueued = ports.runs.setQueued.bind(ports.runs);
  ports.runs.setQueued = async (id, queued) => {
    seen.push(queued ? "queued" : "running");
    await setQueued(id, queued);
  };
  const keyA = sessionInMode("auto", { apiKeyId: "key-a", id: "sess-a" });
  const keyB = sessionInMode("auto", { apiKeyId: "key-b", id: "sess-b" });
  const loop = engine.run({
    session: keyA,
    code: "export default async function () { while (true) {} }",
    limits: { deadlineMs: 1_500 },
  });
  const second = engine.run({ session: keyA, code: "export default async function () { return 2; }" });
  const other = await engine.run({ session: keyB, code: "export default async function () { return 3; }" });
  expect(other.envelope).toMatchObject({ ok: true, result: 3 });
  // Key B never waited; key A's second run was queued behind its first.
  expect(seen).toEqual(["queued"]);
  const [looped, done] = await Promise.all([loop, second]);
  expect(looped.envelope.error?.kind).toBe("timeout");
  expect(done.envelope).toMatchObject({ ok: true, result: 2 });
  expect(seen).toEqual(["queued", "running"]);
  expect(ports.runs.all.get(done.runId)?.status).toBe("ok");
}, 60_000);

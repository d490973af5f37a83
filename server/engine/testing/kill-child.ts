/**
 * A server process for durability.test.ts: runs one action over the real Prisma stores (SQLite
 * file) whose write call is approved, then tells its parent when the write's impl has been entered
 * and waits there, so the parent can `kill -9` it between the call's decision and its effect.
 * The effect (a line in the marker file) is only written if nobody kills the process.
 */
import { createDb } from "../../db";
import { startServerEngine } from "../index";
import { ledgerModule } from "./ledger-module";

const [dbFile, markerFile, userId] = process.argv.slice(2) as [string, string, string];
const db = createDb({ provider: "sqlite", url: dbFile });

const ledger = ledgerModule(markerFile, async () => {
  process.send?.({ t: "impl-entered" });
  // Give the parent time to kill us before the effect happens.
  await new Promise((r) => setTimeout(r, 30_000));
});

const engine = await startServerEngine({
  db,
  instanceId: "doomed",
  workers: 1,
  extraModules: [() => [ledger]],
});

void engine.run({
  session: {
    id: "durability-session",
    userId,
    surface: "playground",
    mode: "default",
    mountedModules: ["*"],
    actorLabel: "durability (playground)",
  },
  title: "append a line",
  code: `import { peek, append } from "toolstore/ledger";
export default async function () { await peek({}); return await append({ line: "paid" }); }`,
  onEvent: (event) => {
    // A human in the console allows the write once.
    if (event.type === "approval.requested") {
      void engine.approvals.decide({
        approvalId: event.approval.id,
        answer: "once",
        decidedBy: { userId, label: "Approver" },
      });
    }
  },
});

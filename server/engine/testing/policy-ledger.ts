/**
 * Test parts for the policy-trial tests (#27): a `ledger` module whose impls call a local HTTP
 * receiver (so a test counts where an effect lands), and an approver that answers pending
 * approvals from the database, as a person in the console queue would.
 */
import type { CapabilityModule } from "../../core/capabilities/types";
import type { ApprovalAnswer } from "../../core/gate/approvals";
import type { Db } from "../../db";
import type { ServerEngine } from "../index";

async function post(url: string, body: unknown): Promise<unknown> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return await response.json();
}

export function ledgerModule(baseUrl: string): CapabilityModule {
  const entry = {
    type: "object",
    properties: { name: { type: "string" }, amount: { type: "number" } },
    required: ["name"],
    additionalProperties: false,
  };
  return {
    name: "ledger",
    description: "A ledger kept by a local HTTP receiver.",
    source: "builtin",
    versionHash: "ledger-trials-1",
    exports: [
      {
        spec: {
          name: "ledger.list",
          description: "Lists the entries.",
          category: "read",
          inputSchema: { type: "object", additionalProperties: false },
        },
        impl: async () => post(`${baseUrl}/list`, {}),
      },
      {
        spec: {
          name: "ledger.write_entry",
          description: "Writes an entry.",
          category: "write",
          inputSchema: entry,
        },
        impl: async (_run, args) => post(`${baseUrl}/write`, args),
      },
      {
        spec: {
          name: "ledger.delete_entry",
          description: "Deletes an entry.",
          category: "write",
          inputSchema: entry,
        },
        impl: async (_run, args) => post(`${baseUrl}/delete`, args),
      },
    ],
  };
}

export interface AskedApproval {
  id: string;
  capability: string;
  args: unknown;
}

/** Answers every pending approval (polling the database) until stopped; keeps what was asked. */
export function answerApprovals(
  engine: ServerEngine,
  db: Db,
  userId: string,
  answer: (approval: AskedApproval) => ApprovalAnswer,
) {
  const asked: AskedApproval[] = [];
  const seen = new Set<string>();
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const pending = await db.approval.findMany({
        where: { status: "pending" },
        orderBy: { createdAt: "asc" },
        select: { id: true, capability: true, argsSnapshot: true },
      });
      for (const row of pending) {
        if (seen.has(row.id)) continue;
        seen.add(row.id);
        const approval = {
          id: row.id,
          capability: row.capability,
          args: JSON.parse(row.argsSnapshot) as unknown,
        };
        asked.push(approval);
        await engine.approvals.decide({
          approvalId: row.id,
          answer: answer(approval),
          decidedBy: { userId, label: "Approver" },
        });
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  return {
    asked,
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

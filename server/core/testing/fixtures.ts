/**
 * Test fixtures: sessions, a canary module with one capability per category, and a scripted
 * approver that answers approval requests as they are published.
 */

import type { CapabilityModule, Category, JsonObject, Mode, Session } from "../capabilities/types";
import type { ApprovalAnswer, ApprovalService } from "../gate/approvals";
import type { EngineEvent } from "../gate/ports";

export function testSession(overrides: Partial<Session> = {}): Session {
  return {
    id: "sess_test",
    userId: "user_alice",
    surface: "playground",
    mode: "default",
    mountedModules: ["*"],
    actorLabel: "alice (playground)",
    ...overrides,
  };
}

export function sessionInMode(mode: Mode, overrides: Partial<Session> = {}): Session {
  return testSession({ mode, id: `sess_${mode}`, ...overrides });
}

export interface CanaryCall {
  capability: string;
  args: JsonObject;
}

/** `canary.read|write|execute|external`: each echoes its arguments and counts its runs. */
export function createCanaryModule(versionHash = "canary-v1"): CapabilityModule & { runs: CanaryCall[] } {
  const runs: CanaryCall[] = [];
  const categories: Category[] = ["read", "write", "execute", "external"];
  return {
    name: "canary",
    description: "One capability per category, for gate tests.",
    source: "builtin",
    versionHash,
    runs,
    exports: categories.map((category) => ({
      spec: {
        name: `canary.${category}`,
        description: `A ${category} canary.`,
        category,
        inputSchema: {
          type: "object",
          properties: { value: { type: "string" }, n: { type: "integer" } },
          additionalProperties: true,
        },
        userMessage: (args: JsonObject) => `${category} ${String(args.value ?? "")}`,
      },
      impl: async (_run, args) => {
        runs.push({ capability: `canary.${category}`, args });
        return { category, echo: args };
      },
    })),
  };
}

/**
 * Answers approval requests from a script: a function of the request (capability, args) that
 * returns an answer, or "wait" to leave it pending. Subscribe it to the engine's events.
 */
export function createScriptedApprover(
  approvals: ApprovalService,
  script: (request: { capability: string; args: unknown }) => ApprovalAnswer | "wait",
) {
  const answered: { capability: string; answer: ApprovalAnswer }[] = [];
  return {
    answered,
    onEvent(event: EngineEvent) {
      if (event.type !== "approval.requested") return;
      const answer = script({ capability: event.approval.capability, args: event.approval.args });
      if (answer === "wait") return;
      answered.push({ capability: event.approval.capability, answer });
      setTimeout(() => {
        void approvals.decide({
          approvalId: event.approval.id,
          answer,
          decidedBy: { userId: "user_bob", label: "bob" },
        });
      }, 5);
    },
  };
}

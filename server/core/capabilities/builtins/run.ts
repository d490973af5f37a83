/**
 * `toolstore/run`: what an action may ask about its own run. `planning()` is true in a plan-mode
 * run, where writes are planned instead of run, so the action can skip work that needs a real
 * result. Category read: it changes nothing.
 */
import type { CapabilityModule } from "../types";

const RUN_MODULE_VERSION = "builtin-run-1";

export function createRunModule(): CapabilityModule {
  return {
    name: "run",
    description: "About the action's own run (is it a plan-mode dry run?).",
    source: "builtin",
    versionHash: RUN_MODULE_VERSION,
    exports: [
      {
        spec: {
          name: "run.planning",
          description:
            "True when the action runs in plan mode: write, execute and external calls return { planned: true, capability, id } instead of running.",
          category: "read",
          inputSchema: { type: "object", properties: {}, additionalProperties: false },
        },
        impl: async (run) => run.session.mode === "plan",
      },
    ],
  };
}

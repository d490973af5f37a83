/**
 * The action contract as agents read it (MCP tool description, playground help, CLI), and the
 * module signatures that follow it (types from ../capabilities/schema-to-ts, like the editor's).
 */
import { argsParameter } from "../capabilities/schema-to-ts";
import { DEFAULT_LIMITS } from "../sandbox/limits";
import type { TypingsModule } from "./module-typings";

const mib = (n: number) => `${Math.round(n / (1024 * 1024))} MiB`;

export const ACTION_CONTRACT = `Write one JavaScript ES module whose default export is an async function. It receives \`input\` (a JSON value, or null) and returns a JSON value:

  import { find_place, current_weather } from "toolstore/weather";

  export default async function (input) {
    const [place] = await find_place({ name: "Oslo", count: 1 });
    const w = await current_weather({ latitude: place.latitude, longitude: place.longitude });
    console.log("raw", w);
    return { place: place.name, conditions: w.conditions };
  }

- Capabilities come only from static imports of "toolstore/<module>", and only the exports listed for that module. Dynamic import() is refused before anything runs.
- Each capability function takes ONE plain object argument and returns a promise.
- Libraries, "toolstore/lib/<name>" (yaml, csv, dates), are plain synchronous functions that run inside the action: no gate, not listed in calls.
- "toolstore/ui" reaches the person at the client that runs the action (ask, confirm, show, progress). A headless run throws e.error === "client_required"; an unanswered question throws "ui_timeout", a declined one "ui_declined". Waiting for the answer does not count against the time limit.
- A call can be refused without running: it throws an error with e.error === "permission_denied" (e.capability, e.reason), or "budget_exceeded" (e.budget names the rule's limit and period). Catch it if the action can go on without it.
- Plan mode is a dry run: read calls run; a write, execute or external call does not run and returns { planned: true, capability, id }. The envelope's plan ({ id, calls }) lists them; call execute_code again with { code, plan: <plan.id> } to ask a human to approve exactly those calls, which then run (any other call asks as usual). \`await planning({})\` from "toolstore/run" tells the action it is planning.
- Some calls wait for a human to approve them; that wait does not count against the time limit.
- console.log / info / warn / error / debug output comes back as logs.
- There is no network, filesystem, timer or Node API: only the imported modules reach the outside.
- Limits: ${DEFAULT_LIMITS.deadlineMs / 1000} s of running time, ${mib(DEFAULT_LIMITS.memoryBytes)} of memory, ${DEFAULT_LIMITS.maxCalls} capability calls, a result of at most ${mib(DEFAULT_LIMITS.resultBytes)} of JSON.
- Images: save a PNG with save({ data_base64 }) from "toolstore/assets" and return its asset_id; never return pixels.

The reply is an envelope: { ok, result?, error?: { kind: "threw"|"timeout"|"out_of_memory"|"refused"|"cancelled"|"internal", message }, logs, calls: [{ capability, category, decision, reason?, ms }], images, durationMs, plan?: { id, calls: [{ id, capability, category, args, argsHash }] } }.`;

/** Signatures of the modules mounted for a key or session, grouped by import specifier. */
export function renderModuleSignatures(modules: readonly TypingsModule[]): string {
  return modules
    .map((m) => {
      const lines = m.exports.map(
        (e) =>
          `  ${e.exportName}(${argsParameter(e.spec.inputSchema)}) [${e.spec.category}] — ${e.spec.description}`,
      );
      return `"toolstore/${m.name}" — ${m.description}\n${lines.join("\n")}`;
    })
    .join("\n\n");
}

/** The library modules for the execute_code description: plain functions, no category, no gate. */
export function renderLibrarySignatures(
  libraries: readonly {
    name: string;
    description: string;
    exports: readonly { signature: string; description: string }[];
  }[],
): string {
  return libraries
    .map((lib) => {
      const lines = lib.exports.map((e) => `  ${e.signature} — ${e.description}`);
      return `"toolstore/lib/${lib.name}" — ${lib.description} (library: synchronous, no gate)\n${lines.join("\n")}`;
    })
    .join("\n\n");
}

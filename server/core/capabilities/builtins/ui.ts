/**
 * `toolstore/ui`: calls that reach the person at the run's connected client — a playground tab,
 * or an MCP client (form elicitation, progress notifications). Every impl is one route to
 * `run.client`; a headless run gets CLIENT_REQUIRED naming what is missing.
 *
 * Category `read` for all five: they reach only the person already at the client, who sees the
 * call itself and answers it; an approval before a question would ask the same person twice, and
 * plan mode (a dry run) should still be able to ask. Rules still apply: a deny rule on `ui.*`
 * blocks them, an ask rule forces an approval first.
 *
 * Time spent waiting for an answer does not count against the action's deadline (the impl
 * pauses it); a question has its own timeout (`timeout_ms`), which the action can catch.
 */
import { AppError } from "../../errors";
import type { CapabilityModule, CapabilityRun, JsonObject, JsonValue, UiCall } from "../types";
import { checkQuestion, clientRequired, timeoutOf, UI_MAX_TIMEOUT_MS } from "../ui-calls";

const UI_MODULE_VERSION = "builtin-ui-1";

const timeoutProperty = {
  type: "integer",
  minimum: 1000,
  maximum: UI_MAX_TIMEOUT_MS,
  description: "How long to wait for the answer, in ms (default 300000). Then the call throws ui_timeout.",
};

async function route(run: CapabilityRun, call: UiCall, args: JsonObject): Promise<JsonValue> {
  const capability = `ui.${call}`;
  const client = run.client;
  if (!client) throw clientRequired(capability, call, []);
  const waits = call === "ask" || call === "confirm";
  // A person answering is not the action's work: the deadline stops while they decide.
  const resume = waits ? run.pauseDeadline?.() : undefined;
  try {
    return await client.execute(call, args, {
      runId: run.runId,
      capability,
      timeoutMs: timeoutOf(args),
      signal: run.signal,
    });
  } finally {
    resume?.();
  }
}

export function createUiModule(): CapabilityModule {
  return {
    name: "ui",
    description:
      "Reach the person at the client that runs this action: show panes, ask questions, report progress. Headless runs throw client_required.",
    source: "builtin",
    versionHash: UI_MODULE_VERSION,
    exports: [
      {
        spec: {
          name: "ui.show",
          description:
            "Shows a pane in the client's run timeline: markdown (no raw HTML), a table (array of row objects), any JSON value, or an image by asset_id. Returns { shown: true }.",
          category: "read",
          inputSchema: {
            type: "object",
            properties: {
              title: { type: "string", maxLength: 200 },
              markdown: { type: "string", maxLength: 20_000 },
              table: { type: "array", maxItems: 500, items: { type: "object" } },
              json: {},
              image: {
                type: "object",
                properties: { asset_id: { type: "string", minLength: 1, maxLength: 100 } },
                required: ["asset_id"],
                additionalProperties: false,
              },
            },
            anyOf: [
              { required: ["markdown"] },
              { required: ["table"] },
              { required: ["json"] },
              { required: ["image"] },
            ],
            additionalProperties: false,
          },
        },
        impl: (run, args) => route(run, "show", args),
      },
      {
        spec: {
          name: "ui.ask",
          description:
            "Asks the person at the client and returns the answer: one of `choices`, an object valid against `schema` (a JSON Schema of type object), or text. Throws ui_timeout when nobody answers in time, ui_declined when they decline.",
          category: "read",
          inputSchema: {
            type: "object",
            properties: {
              question: { type: "string", minLength: 1, maxLength: 2000 },
              choices: {
                type: "array",
                minItems: 1,
                maxItems: 20,
                uniqueItems: true,
                items: { type: "string", minLength: 1, maxLength: 200 },
              },
              schema: { type: "object" },
              timeout_ms: timeoutProperty,
            },
            required: ["question"],
            additionalProperties: false,
          },
        },
        impl: async (run, args) => {
          checkQuestion("ui.ask", args);
          return route(run, "ask", args);
        },
      },
      {
        spec: {
          name: "ui.confirm",
          description: "Asks the person at the client a yes/no question; returns true or false.",
          category: "read",
          inputSchema: {
            type: "object",
            properties: {
              message: { type: "string", minLength: 1, maxLength: 2000 },
              timeout_ms: timeoutProperty,
            },
            required: ["message"],
            additionalProperties: false,
          },
        },
        impl: (run, args) => route(run, "confirm", args),
      },
      {
        spec: {
          name: "ui.progress",
          description:
            "Reports progress to the client (a progress row in the playground, an MCP progress notification). Returns { reported: true }.",
          category: "read",
          inputSchema: {
            type: "object",
            properties: {
              message: { type: "string", minLength: 1, maxLength: 500 },
              fraction: { type: "number", minimum: 0, maximum: 1 },
            },
            required: ["message"],
            additionalProperties: false,
          },
        },
        impl: (run, args) => route(run, "progress", args),
      },
      {
        spec: {
          name: "ui.renderers",
          description:
            "The clients connected to this run: [{ id, kind, label, renders }]; empty on a headless run.",
          category: "read",
          inputSchema: { type: "object", properties: {}, additionalProperties: false },
        },
        impl: async (run) => {
          if (run.signal.aborted) throw new AppError("CONFLICT", "the run has ended");
          return (run.client?.renderers() ?? []) as unknown as JsonValue;
        },
      },
    ],
  };
}

/**
 * What every `toolstore/ui` client shares: the errors a call gets when nothing can render it, and
 * the check of a person's answer (a listed choice, a boolean, an object valid against the asked
 * schema). A console tab and an MCP client both answer through `checkAnswer`, so an answer the
 * action receives is always one the question allowed.
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { AppError } from "../errors";
import type { JsonObject, JsonSchema, JsonValue, RendererInfo, UiCall } from "./types";

const ajv = new Ajv2020({ allErrors: true, strict: false, validateFormats: true });
addFormats.default(ajv);

/** Default and ceiling of how long a question waits for its answer. */
export const UI_DEFAULT_TIMEOUT_MS = 5 * 60_000;
export const UI_MAX_TIMEOUT_MS = 30 * 60_000;

const WHAT: Record<UiCall, string> = {
  show: "a client that renders panes (a playground tab)",
  ask: "a client that can ask a person (a playground tab, or an MCP client with form elicitation)",
  confirm: "a client that can ask a person (a playground tab, or an MCP client with form elicitation)",
  progress: "a client that shows progress (a playground tab, or an MCP client that sent a progressToken)",
};

/** The CLIENT_REQUIRED error of a call no connected client renders, naming what is missing. */
export function clientRequired(capability: string, call: UiCall, renderers: RendererInfo[]): AppError {
  const connected = renderers.length
    ? `connected: ${renderers.map((r) => `${r.label} (renders ${r.renders.join(", ") || "nothing"})`).join("; ")}`
    : "this run is headless: no client is connected";
  const reason = `${capability} needs ${WHAT[call]}; ${connected}`;
  return new AppError("CLIENT_REQUIRED", reason, {
    details: { error: "client_required", capability, reason },
  });
}

export function clientTimeout(capability: string, timeoutMs: number): AppError {
  const reason = `nobody answered within ${Math.round(timeoutMs / 1000)} s`;
  return new AppError("CLIENT_TIMEOUT", `${capability}: ${reason}`, {
    details: { error: "ui_timeout", capability, reason },
  });
}

export function clientDeclined(capability: string, by: string): AppError {
  const reason = `${by} declined to answer`;
  return new AppError("CLIENT_DECLINED", `${capability}: ${reason}`, {
    details: { error: "ui_declined", capability, reason },
  });
}

/** The timeout a question asked for, under the ceiling. */
export function timeoutOf(args: JsonObject): number {
  const asked = typeof args.timeout_ms === "number" ? args.timeout_ms : UI_DEFAULT_TIMEOUT_MS;
  return Math.min(Math.max(1_000, Math.round(asked)), UI_MAX_TIMEOUT_MS);
}

function compileSchema(capability: string, schema: JsonSchema): ValidateFunction {
  if (schema.type !== "object") {
    throw new AppError("BAD_INPUT", `${capability}: schema must be a JSON Schema with type "object"`, {
      details: { error: "bad_input", capability, reason: 'schema must have type "object"' },
    });
  }
  try {
    return ajv.compile(schema);
  } catch (error) {
    const reason = `schema does not compile: ${(error as Error).message}`;
    throw new AppError("BAD_INPUT", `${capability}: ${reason}`, {
      details: { error: "bad_input", capability, reason },
    });
  }
}

/** Checks a question's own arguments beyond the input schema (a usable answer schema). */
export function checkQuestion(capability: string, args: JsonObject): void {
  if (args.schema !== undefined && args.choices !== undefined) {
    throw new AppError("BAD_INPUT", `${capability}: give choices or schema, not both`, {
      details: { error: "bad_input", capability, reason: "give choices or schema, not both" },
    });
  }
  if (args.schema !== undefined) compileSchema(capability, args.schema as JsonSchema);
}

/**
 * The answer as the action receives it, or BAD_INPUT naming what is wrong with it: `ask` returns
 * a listed choice, an object valid against `schema`, or text; `confirm` a boolean.
 */
export function checkAnswer(call: UiCall, args: JsonObject, answer: unknown): JsonValue {
  const bad = (reason: string) =>
    new AppError("BAD_INPUT", `the answer ${reason}`, { details: { error: "bad_input", reason } });
  if (call === "confirm") {
    if (typeof answer !== "boolean") throw bad("must be true or false");
    return answer;
  }
  if (call !== "ask") throw bad(`is not expected: ${call} asks nothing`);
  const choices = Array.isArray(args.choices) ? (args.choices as JsonValue[]) : undefined;
  if (choices) {
    if (!choices.some((c) => c === answer)) throw bad(`must be one of ${JSON.stringify(choices)}`);
    return answer as JsonValue;
  }
  if (args.schema !== undefined) {
    const validate = compileSchema("ui.ask", args.schema as JsonSchema);
    if (!validate(answer)) {
      const why = (validate.errors ?? [])
        .slice(0, 3)
        .map((e) => `${e.instancePath || "answer"} ${e.message ?? "is invalid"}`)
        .join("; ");
      throw bad(`does not match the schema: ${why}`);
    }
    return answer as JsonValue;
  }
  if (typeof answer !== "string") throw bad("must be text");
  return answer.slice(0, 10_000);
}

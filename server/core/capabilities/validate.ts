/**
 * Validation of argument snapshots against a capability's inputSchema, with ajv (JSON Schema
 * 2020-12 plus formats). Compiled validators are cached per schema object and per schema text.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { AppError } from "../errors";
import type { CapabilitySpec, JsonSchema } from "./types";

const ajv = new Ajv2020({ allErrors: true, strict: false, validateFormats: true });
addFormats.default(ajv);

const cache = new WeakMap<JsonSchema, ValidateFunction>();
/**
 * By the schema's text too: sources rebuild their specs (a toolset's, an MCP server's) when they
 * are read again, and an ajv compile costs far more than the JSON.stringify that finds it here.
 */
const byText = new Map<string, ValidateFunction>();
const MAX_BY_TEXT = 2_000;

function compile(spec: CapabilitySpec): ValidateFunction {
  let fn = cache.get(spec.inputSchema);
  if (fn) return fn;
  const text = JSON.stringify(spec.inputSchema);
  fn = byText.get(text);
  if (!fn) {
    try {
      fn = ajv.compile(spec.inputSchema);
    } catch (error) {
      throw new AppError(
        "INTERNAL",
        `input schema of ${spec.name} does not compile: ${(error as Error).message}`,
      );
    }
    if (byText.size >= MAX_BY_TEXT) byText.clear();
    byText.set(text, fn);
  }
  cache.set(spec.inputSchema, fn);
  return fn;
}

/** Throws if the schema itself is unusable (used when registering a module). */
export function assertSchemaCompiles(spec: CapabilitySpec): void {
  compile(spec);
}

/** The argument an ajv error is about (dotted path; "" for the arguments object) and what is wrong. */
function fieldOf(error: ErrorObject): { field: string; reason: string } {
  const path = error.instancePath ? error.instancePath.slice(1).replace(/\//g, ".") : "";
  const params = error.params as Record<string, unknown>;
  const under = (name: unknown) => [path, name].filter(Boolean).join(".");
  switch (error.keyword) {
    case "required":
      return { field: under(params.missingProperty), reason: "is required" };
    case "additionalProperties":
      return { field: under(params.additionalProperty), reason: "is not an argument of this capability" };
    case "enum":
      return { field: path, reason: `must be one of ${JSON.stringify(params.allowedValues)}` };
    default:
      return { field: path, reason: error.message ?? "is invalid" };
  }
}

function describe(error: ErrorObject): string {
  const { field, reason } = fieldOf(error);
  switch (error.keyword) {
    case "required":
      return `missing required argument \`${field}\``;
    case "additionalProperties":
      return `unknown argument \`${field}\``;
    default:
      return field ? `argument \`${field}\` ${reason}` : `arguments ${reason}`;
  }
}

/** Throws AppError BAD_INPUT naming the field(s) when `args` does not satisfy the spec's schema. */
export function validateArgs(spec: CapabilitySpec, args: unknown): void {
  const fn = compile(spec);
  if (fn(args)) return;
  const errors = fn.errors ?? [];
  const messages = [...new Set(errors.map(describe))].slice(0, 5);
  const fields: { field: string; reason: string }[] = [];
  for (const f of errors.map(fieldOf)) {
    if (!fields.some((x) => x.field === f.field && x.reason === f.reason)) fields.push(f);
  }
  // `error`, `reason` and `fields` reach the guest as they are (toGuestError): it can tell which
  // argument to fix without parsing the message.
  throw new AppError("BAD_INPUT", `${spec.name}: ${messages.join("; ")}`, {
    details: {
      error: "bad_input",
      capability: spec.name,
      reason: messages.join("; "),
      fields: fields.slice(0, 10),
      errors: errors.map((e) => ({ path: e.instancePath, message: e.message })),
    },
  });
}

/**
 * Validation of argument snapshots against a capability's inputSchema, with ajv (JSON Schema
 * 2020-12 plus formats). Compiled validators are cached per schema object.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { AppError } from "../errors";
import type { CapabilitySpec, JsonSchema } from "./types";

const ajv = new Ajv2020({ allErrors: true, strict: false, validateFormats: true });
addFormats.default(ajv);

const cache = new WeakMap<JsonSchema, ValidateFunction>();

function compile(spec: CapabilitySpec): ValidateFunction {
  let fn = cache.get(spec.inputSchema);
  if (!fn) {
    try {
      fn = ajv.compile(spec.inputSchema);
    } catch (error) {
      throw new AppError(
        "INTERNAL",
        `input schema of ${spec.name} does not compile: ${(error as Error).message}`,
      );
    }
    cache.set(spec.inputSchema, fn);
  }
  return fn;
}

/** Throws if the schema itself is unusable (used when registering a module). */
export function assertSchemaCompiles(spec: CapabilitySpec): void {
  compile(spec);
}

function describe(error: ErrorObject): string {
  const field = error.instancePath ? error.instancePath.slice(1).replace(/\//g, ".") : "";
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "required":
      return `missing required argument \`${[field, params.missingProperty].filter(Boolean).join(".")}\``;
    case "additionalProperties":
      return `unknown argument \`${[field, params.additionalProperty].filter(Boolean).join(".")}\``;
    case "enum":
      return `argument \`${field}\` must be one of ${JSON.stringify(params.allowedValues)}`;
    default:
      return field
        ? `argument \`${field}\` ${error.message ?? "is invalid"}`
        : `arguments ${error.message ?? "are invalid"}`;
  }
}

/** Throws AppError BAD_INPUT naming the field(s) when `args` does not satisfy the spec's schema. */
export function validateArgs(spec: CapabilitySpec, args: unknown): void {
  const fn = compile(spec);
  if (fn(args)) return;
  const errors = fn.errors ?? [];
  const messages = [...new Set(errors.map(describe))].slice(0, 5);
  throw new AppError("BAD_INPUT", `${spec.name}: ${messages.join("; ")}`, {
    details: {
      capability: spec.name,
      errors: errors.map((e) => ({ path: e.instancePath, message: e.message })),
    },
  });
}

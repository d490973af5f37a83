/**
 * Argument snapshots: the one copy of a capability call's arguments that is validated, gated,
 * shown to the approver, hashed, and handed to the impl. Canonical JSON (object keys sorted by
 * UTF-16 code units, as RFC 8785 does; no whitespace) so equal arguments hash equally.
 */
import { createHash } from "node:crypto";
import { AppError } from "../errors";
import type { JsonObject, JsonValue } from "./types";

export interface ArgsSnapshot {
  /** Deep-frozen copy, shares nothing with the caller's object. */
  value: Readonly<JsonObject>;
  /** Canonical JSON text of `value`. */
  json: string;
  /** sha256 of `json`, hex. */
  hash: string;
}

const MAX_DEPTH = 64;

/** Canonical JSON of a plain JSON value. Throws AppError BAD_INPUT naming the offending path. */
export function canonicalJson(value: unknown): string {
  return write(value, "$", 0, new Set());
}

function write(value: unknown, path: string, depth: number, seen: Set<object>): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "boolean":
      return value ? "true" : "false";
    case "number":
      if (!Number.isFinite(value)) throw bad(path, "is not a finite number");
      return JSON.stringify(value);
    case "object":
      break;
    default:
      throw bad(path, `is a ${typeof value}, which JSON cannot carry`);
  }
  if (depth >= MAX_DEPTH) throw bad(path, `is nested deeper than ${MAX_DEPTH} levels`);
  const obj = value as object;
  if (seen.has(obj)) throw bad(path, "is a circular reference");
  seen.add(obj);
  try {
    if (Array.isArray(obj)) {
      const parts: string[] = [];
      for (let i = 0; i < obj.length; i++) {
        const item: unknown = obj[i];
        parts.push(item === undefined ? "null" : write(item, `${path}[${i}]`, depth + 1, seen));
      }
      return `[${parts.join(",")}]`;
    }
    const proto = Object.getPrototypeOf(obj);
    if (proto !== Object.prototype && proto !== null) {
      throw bad(path, `is a ${proto?.constructor?.name ?? "non-plain"} object, not plain JSON`);
    }
    const record = obj as Record<string, unknown>;
    const keys = Object.keys(record).sort();
    const parts: string[] = [];
    for (const key of keys) {
      const item = record[key];
      if (item === undefined) continue;
      parts.push(`${JSON.stringify(key)}:${write(item, `${path}.${key}`, depth + 1, seen)}`);
    }
    return `{${parts.join(",")}}`;
  } finally {
    seen.delete(obj);
  }
}

function bad(path: string, what: string): AppError {
  return new AppError("BAD_INPUT", `argument ${path} ${what}`, { details: { path } });
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object") {
    for (const item of Object.values(value)) deepFreeze(item);
    Object.freeze(value);
  }
  return value;
}

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/**
 * Snapshot `args` once: must be a plain JSON object (undefined means `{}`). Later changes to
 * `args`, getters that would answer differently, or Proxies cannot affect the result.
 */
export function snapshotArgs(args: unknown, maxChars = Number.POSITIVE_INFINITY): ArgsSnapshot {
  const source = args === undefined ? {} : args;
  if (source === null || typeof source !== "object" || Array.isArray(source)) {
    throw new AppError("BAD_INPUT", "arguments must be one plain JSON object like { key: value }");
  }
  const json = canonicalJson(source);
  if (json.length > maxChars) {
    throw new AppError(
      "LIMIT_EXCEEDED",
      `arguments are ${json.length} characters of JSON, over the limit of ${maxChars}`,
    );
  }
  return { value: deepFreeze(JSON.parse(json) as JsonObject), json, hash: sha256Hex(json) };
}

/** Snapshot from JSON text that came out of the sandbox: parsed once, then canonicalized. */
export function snapshotFromJson(text: string, maxChars = Number.POSITIVE_INFINITY): ArgsSnapshot {
  if (text.length > maxChars) {
    throw new AppError(
      "LIMIT_EXCEEDED",
      `arguments are ${text.length} characters of JSON, over the limit of ${maxChars}`,
    );
  }
  let parsed: JsonValue;
  try {
    parsed = JSON.parse(text) as JsonValue;
  } catch {
    throw new AppError("BAD_INPUT", "arguments are not valid JSON");
  }
  return snapshotArgs(parsed, maxChars);
}

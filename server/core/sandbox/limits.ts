/**
 * Per-action sandbox limits: defaults, hard ceilings, and the one function that resolves a
 * requested set against them. Values above a ceiling are refused (BAD_INPUT), never silently
 * clamped, so a misconfiguration is visible.
 */
import { AppError } from "../errors";

export interface SandboxLimits {
  /** Wall-clock deadline in ms. Time spent waiting for a human approval is not counted. */
  deadlineMs: number;
  /** Hard cap on the whole WebAssembly memory of the QuickJS module that runs the action. */
  memoryBytes: number;
  /** QuickJS stack limit (setMaxStackSize). */
  stackBytes: number;
  /** Total characters of console output kept; the rest is dropped with a marker. */
  logBytes: number;
  /** Number of console entries kept. */
  logEntries: number;
  /** Capability calls (or, for toolset bindings, fetch calls) per action. */
  maxCalls: number;
  /** Characters of the JSON result. A larger result fails the action. */
  resultBytes: number;
  /** Characters of the JSON arguments of one capability call. */
  argsBytes: number;
}

const MiB = 1024 * 1024;

export const DEFAULT_LIMITS: Readonly<SandboxLimits> = Object.freeze({
  deadlineMs: 30_000,
  memoryBytes: 64 * MiB,
  stackBytes: 256 * 1024,
  logBytes: 64 * 1024,
  logEntries: 1_000,
  maxCalls: 200,
  resultBytes: 1 * MiB,
  argsBytes: 1 * MiB,
});

export const LIMIT_CEILINGS: Readonly<SandboxLimits> = Object.freeze({
  deadlineMs: 10 * 60_000,
  memoryBytes: 1024 * MiB,
  stackBytes: 1 * MiB,
  logBytes: 4 * MiB,
  logEntries: 100_000,
  maxCalls: 10_000,
  resultBytes: 16 * MiB,
  argsBytes: 16 * MiB,
});

/** Below these the runtime cannot even start (QuickJS needs its initial 16 MiB of linear memory). */
const LIMIT_FLOORS: Readonly<SandboxLimits> = Object.freeze({
  deadlineMs: 1,
  memoryBytes: 16 * MiB,
  stackBytes: 32 * 1024,
  logBytes: 0,
  logEntries: 0,
  maxCalls: 0,
  resultBytes: 16,
  argsBytes: 16,
});

const LIMIT_KEYS = Object.keys(DEFAULT_LIMITS) as (keyof SandboxLimits)[];

/**
 * Merge `overrides` over `base` (default: DEFAULT_LIMITS) and check each value against its floor
 * and ceiling. Throws AppError BAD_INPUT naming the limit.
 */
export function resolveLimits(
  overrides?: Partial<SandboxLimits>,
  base: Readonly<SandboxLimits> = DEFAULT_LIMITS,
  ceilings: Readonly<SandboxLimits> = LIMIT_CEILINGS,
): SandboxLimits {
  const out = { ...base };
  for (const key of LIMIT_KEYS) {
    const value = overrides?.[key];
    if (value === undefined) continue;
    out[key] = value;
  }
  for (const key of LIMIT_KEYS) {
    const value = out[key];
    if (!Number.isInteger(value) || value < LIMIT_FLOORS[key] || value > ceilings[key]) {
      throw new AppError(
        "BAD_INPUT",
        `limit ${key} must be an integer between ${LIMIT_FLOORS[key]} and ${ceilings[key]}, got ${String(value)}`,
        { details: { limit: key, value, min: LIMIT_FLOORS[key], max: ceilings[key] } },
      );
    }
  }
  return out;
}

/**
 * Shared helpers for the example-toolset tests: compile a folder under toolsets/ once, and run a
 * binding through the engine's real sandbox pool (QuickJS in worker threads), the same way the
 * server runs it.
 */
import path from "node:path";
import { createSandboxPool, type SandboxPool } from "../core/sandbox/pool";
import {
  bindingInvocation,
  type CompiledToolset,
  compileToolset,
  readToolsetFolder,
  type ToolsetFiles,
} from "../core/toolsets";

export const TOOLSETS_DIR = path.resolve(import.meta.dirname, "../../toolsets");

const cache = new Map<string, CompiledToolset>();

export function compileExample(name: string): CompiledToolset {
  let compiled = cache.get(name);
  if (!compiled) {
    const input = readToolsetFolder(path.join(TOOLSETS_DIR, name));
    compiled = compileToolset({ ...input, files: input.files as ToolsetFiles });
    cache.set(name, compiled);
  }
  return compiled;
}

let pool: SandboxPool | undefined;

export function testPool(): SandboxPool {
  pool ??= createSandboxPool({ workers: 1 });
  return pool;
}

export async function closeTestPool(): Promise<void> {
  await pool?.close();
  pool = undefined;
}

export interface RunOptions {
  env?: Record<string, string>;
  /** Secret values by name; `env` should hold their `{{secret:NAME}}` placeholders. */
  secrets?: Record<string, string>;
  allowedHosts?: string[];
  timeoutMs?: number;
  redact?: string[];
}

export type RunOutcome =
  | { ok: true; value: unknown; logs: string[] }
  | { ok: false; error: string; logs: string[] };

/** Calls one binding with an arguments object, as the capability dispatcher will. */
export async function runBinding(
  toolset: CompiledToolset,
  bindingName: string,
  args: Record<string, unknown>,
  options: RunOptions = {},
): Promise<RunOutcome> {
  const binding = toolset.bindings.find((b) => b.name === bindingName);
  if (!binding) throw new Error(`${toolset.name} has no binding ${bindingName}`);
  const call = bindingInvocation(toolset.compiledJs, binding, args);
  const result = await testPool().runBinding({
    code: call.code,
    exportName: call.exportName,
    args: call.args,
    env: options.env ?? {},
    allowedHosts: options.allowedHosts ?? toolset.declarations.hosts,
    timeoutMs: options.timeoutMs ?? toolset.declarations.timeoutMs ?? 10_000,
    ...(options.secrets ? { secrets: options.secrets } : {}),
    ...(options.redact ? { redact: options.redact } : {}),
  });
  const logs = result.logs.map((l) => l.text);
  return result.ok
    ? { ok: true, value: result.value, logs }
    : { ok: false, error: result.error.message, logs };
}

/**
 * Toolsets as capability modules for the engine's registry: one `toolstore/<name>` module per
 * toolset, one export per binding, `versionHash` = the current version's content hash (grants and
 * allow rules bind to it), `doc` = the full doc.md (store.info returns it).
 *
 * Every call runs the binding in the sandbox pool with the toolset's CURRENT settings read at call
 * time (timeout, allowed hosts, environment). Code sees a secret only as its placeholder
 * `{{secret:NAME:<nonce>}}`, fresh for each call; the runtime's egress puts the value in where the
 * version's header lets it go (`@secret NAME header body`, core/sandbox/secret-fill.ts), and values
 * are still redacted from the result, errors and logs. Nothing of a toolset runs in the server process.
 */
import type { ModuleSource } from "../../core/capabilities/ports";
import type { CapabilityExport, CapabilityModule, JsonObject } from "../../core/capabilities/types";
import { AppError } from "../../core/errors";
import type { BindingRuntime, BindingRuntimes, ToolsetLanguage } from "../../core/sandbox/binding-runtime";
import { toolsetEnvironment } from "../../core/sandbox/egress";
import type { SecretPlacement } from "../../core/sandbox/secret-fill";
import {
  bindingInvocation,
  capabilityName,
  type ToolsetBinding,
  type ToolsetDeclarations,
} from "../../core/toolsets";
import type { Db } from "../../db";
import { openEnvValue } from "../../services/stored-secrets";
import { declarationsOf, parseBindings, parseHosts } from "./rows";

export interface ToolsetModulesOptions {
  db: Db;
  /**
   * The binding runtime of each toolset language (the QuickJS pool for TypeScript), or a getter
   * when they are created after this source.
   */
  runtimes: BindingRuntimes | (() => BindingRuntimes);
}

/** The parts of a stored version a module needs. */
export interface CachedVersion {
  language: ToolsetLanguage;
  /** What the runtime runs: compiled JavaScript (typescript) or the source (python). */
  compiledJs: string;
  contentHash: string;
  doc: string;
  bindings: ToolsetBinding[];
  /** Where each declared secret may go (its header's `@secret NAME header body`); default headers only. */
  secretPlacements?: Record<string, readonly SecretPlacement[]>;
}

/** The placements a version's header declares, by secret name. */
export function secretPlacementsOf(
  declarations: ToolsetDeclarations,
): Record<string, readonly SecretPlacement[]> {
  const out: Record<string, readonly SecretPlacement[]> = {};
  for (const e of declarations.env) if (e.secret && e.placements) out[e.name] = e.placements;
  return out;
}

/** What one call needs, read fresh so console changes apply to the next call. */
export interface ToolsetRuntime {
  timeoutMs: number;
  allowedHosts: string[];
  /** Plain variables by value, secrets as `{{secret:NAME}}` (toolset code never holds a value). */
  env: Record<string, string>;
  /** Secret values by name, for the runtime's egress only. */
  secrets: Record<string, string>;
}

export async function loadToolsetRuntime(db: Db, toolsetId: string): Promise<ToolsetRuntime> {
  const row = await db.toolset.findUnique({
    where: { id: toolsetId },
    select: {
      timeoutMs: true,
      allowedHosts: true,
      envVars: { select: { name: true, value: true, secret: true } },
    },
  });
  if (!row) throw new AppError("NOT_FOUND", "the toolset was deleted");
  const variables = await Promise.all(
    row.envVars.map(async (v) => ({
      ...v,
      value: await openEnvValue(db, { toolsetId, name: v.name, value: v.value, secret: v.secret }),
    })),
  );
  const { env, secrets } = toolsetEnvironment(variables);
  return { timeoutMs: row.timeoutMs, allowedHosts: parseHosts(row.allowedHosts), env, secrets };
}

export interface ToolsetModuleInput {
  name: string;
  description: string;
  version: CachedVersion;
  /** Settings read at call time. */
  runtime: () => Promise<ToolsetRuntime>;
  runtimes: () => BindingRuntimes;
}

function runtimeFor(input: ToolsetModuleInput): BindingRuntime {
  const runtime = input.runtimes()[input.version.language];
  if (!runtime) {
    throw new AppError(
      "CONFIG_INVALID",
      `toolset "${input.name}" is written in ${input.version.language}, and this server has no ${input.version.language} runtime`,
    );
  }
  return runtime;
}

/** One toolset version as a capability module whose exports run in the sandbox pool. */
export function buildToolsetModule(input: ToolsetModuleInput): CapabilityModule {
  return {
    name: input.name,
    description: input.description,
    source: "toolset",
    versionHash: input.version.contentHash,
    doc: input.version.doc,
    exports: input.version.bindings.map((binding) => {
      const wire = capabilityName(input.name, binding.name);
      return {
        spec: {
          name: wire,
          description: binding.description,
          inputSchema: binding.inputSchema,
          // As declared: the registry applies the reviewed (stored) category, for every source alike.
          category: binding.category,
        },
        impl: bindingImpl(input, binding, wire),
      };
    }),
  };
}

function bindingImpl(
  input: ToolsetModuleInput,
  binding: ToolsetBinding,
  wireName: string,
): CapabilityExport["impl"] {
  /**
   * The module with its generated entry, built once: one string for every call, so the pool's
   * lookups by its content (`BindingJob.codeId`) reuse its hash instead of hashing 20 KiB anew.
   */
  let entryCode: string | undefined;
  return async (run, args: JsonObject, site) => {
    const runtime = await input.runtime();
    // Python takes named arguments (its defaults apply to the ones left out); TypeScript gets a
    // generated entry that maps them to positions.
    const call =
      input.version.language === "python"
        ? {
            code: input.version.compiledJs,
            exportName: binding.name,
            args: [],
            kwargs: Object.fromEntries(
              binding.params.filter((p) => Object.hasOwn(args, p)).map((p) => [p, args[p]]),
            ),
          }
        : bindingInvocation(input.version.compiledJs, binding, args);
    if (input.version.language !== "python") {
      entryCode ??= call.code;
      call.code = entryCode;
    }
    const result = await runtimeFor(input).runBinding({
      trustDomain: `${input.name}@${input.version.contentHash}`,
      code: call.code,
      exportName: call.exportName,
      args: call.args,
      ...("kwargs" in call ? { kwargs: call.kwargs } : {}),
      env: runtime.env,
      secrets: runtime.secrets,
      ...(input.version.secretPlacements ? { secretPlacements: input.version.secretPlacements } : {}),
      allowedHosts: runtime.allowedHosts,
      timeoutMs: runtime.timeoutMs,
      redact: Object.values(runtime.secrets),
      signal: run.signal,
      ...(site?.sandboxCall === undefined ? {} : { caller: site.sandboxCall }),
      ...(run.pauseDeadline ? { pauseDeadline: () => run.pauseDeadline?.() ?? (() => {}) } : {}),
    });
    if (result.ok) return result.value;
    const { kind, message } = result.error;
    if (result.error.startup) {
      // The code never ran: say so, not "timed out after <the toolset's timeout>".
      throw new AppError(
        kind === "timeout" ? "LIMIT_EXCEEDED" : "INTERNAL",
        `${wireName} did not run: ${message}`,
        {
          details: {
            error: kind === "timeout" ? "timeout" : "internal",
            capability: wireName,
            reason: message,
          },
        },
      );
    }
    if (kind === "timeout") {
      throw new AppError("LIMIT_EXCEEDED", `${wireName} timed out after ${runtime.timeoutMs} ms`, {
        details: { error: "timeout", capability: wireName, reason: message },
      });
    }
    if (kind === "out_of_memory") {
      throw new AppError("LIMIT_EXCEEDED", `${wireName} ran out of memory`, {
        details: { error: "out_of_memory", capability: wireName, reason: message },
      });
    }
    if (kind === "internal") throw new AppError("INTERNAL", `${wireName}: ${message}`);
    // The binding threw: the guest sees `capability_failed` with the (redacted) message.
    throw new Error(message);
  };
}

/**
 * The registry's source for toolsets. Toolset rows and categories are read on every call of
 * `listModules` (the registry caches briefly), and each toolset's settings at its first call after
 * that; compiled code is cached per version id.
 */
export function createToolsetModuleSource(options: ToolsetModulesOptions): ModuleSource {
  const { db } = options;
  const runtimes = () => (typeof options.runtimes === "function" ? options.runtimes() : options.runtimes);
  const versions = new Map<string, CachedVersion>();
  return {
    id: "toolsets",
    async listModules(): Promise<CapabilityModule[]> {
      const toolsets = await db.toolset.findMany({
        where: { currentVersionId: { not: null } },
        orderBy: { name: "asc" },
        select: { id: true, name: true, description: true, currentVersionId: true },
      });
      const wanted = toolsets.map((t) => t.currentVersionId as string);
      const missing = wanted.filter((id) => !versions.has(id));
      if (missing.length > 0) {
        const rows = await db.toolsetVersion.findMany({
          where: { id: { in: missing } },
          select: {
            id: true,
            compiledJs: true,
            contentHash: true,
            doc: true,
            bindings: true,
            language: true,
            source: true,
          },
        });
        for (const r of rows) {
          const language = r.language === "python" ? "python" : "typescript";
          versions.set(r.id, {
            language,
            compiledJs: r.compiledJs,
            contentHash: r.contentHash,
            doc: r.doc,
            bindings: parseBindings(r.bindings),
            secretPlacements: secretPlacementsOf(declarationsOf(r.source, language)),
          });
        }
      }
      for (const id of [...versions.keys()]) if (!wanted.includes(id)) versions.delete(id);
      const modules: CapabilityModule[] = [];
      for (const t of toolsets) {
        const version = versions.get(t.currentVersionId as string);
        if (!version) continue;
        // Settings are read once per module list, so they are as fresh as the list itself (the
        // registry refreshes it within a second, and at once after a write on this instance).
        let settings: Promise<ToolsetRuntime> | undefined;
        const runtime = () => {
          if (!settings) {
            const loading = loadToolsetRuntime(db, t.id);
            settings = loading;
            loading.catch(() => {
              if (settings === loading) settings = undefined;
            });
          }
          return settings;
        };
        modules.push(
          buildToolsetModule({ name: t.name, description: t.description, version, runtime, runtimes }),
        );
      }
      return modules;
    },
  };
}

/** Effective categories of every known capability, as stored (the console edits them). */
/** The version hash a capability's grants and allow rules must match; null when unknown. */
export async function currentVersionHash(db: Db, capability: string): Promise<string | null> {
  const row = await db.capability.findUnique({
    where: { name: capability },
    select: { versionHash: true, active: true },
  });
  return row?.active ? row.versionHash : null;
}

/**
 * The console's side of toolsets, over the toolsets service: the detail view with publisher
 * names, publish and sync from the toolsets folder, upload of the two files, and "Try it" — one
 * binding called directly through the engine's run.invoke, so the gate decides like for any call
 * (it may wait in the approval queue). Nothing here bypasses the gate or reads a secret back.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import type { Engine } from "../../core/actions/engine";
import type { CapabilityRegistry } from "../../core/capabilities/registry";
import { MODES, type Session } from "../../core/capabilities/types";
import { AppError, isAppError } from "../../core/errors";
import type { EngineEvent } from "../../core/gate/ports";
import { TOOLSET_LANGUAGES } from "../../core/sandbox/binding-runtime";
import { isValidToolsetName, MAX_TOOLSET_FILE_BYTES } from "../../core/toolsets";
import type { Db } from "../../db";
import type { SessionUser } from "../../services/auth";
import { getToolset, publishToolset, syncToolsetsFolder } from "./";

/** The registry of this instance, told after a publish so it lists the new version at once. */
type RegistryCache = Pick<CapabilityRegistry, "invalidate">;

const toolsetName = z
  .string()
  .trim()
  .refine(isValidToolsetName, "a toolset name is lower-case letters, digits, - and _, like weather");

export const uploadSchema = z.object({
  name: toolsetName,
  doc: z.string().min(1, "doc.md is empty").max(MAX_TOOLSET_FILE_BYTES, "doc.md is larger than 512 KiB"),
  /** The code file's text: toolset.ts, or toolset.py when `language` is python. */
  source: z
    .string()
    .min(1, "the code file (toolset.ts or toolset.py) is empty")
    .max(MAX_TOOLSET_FILE_BYTES, "the code file (toolset.ts or toolset.py) is larger than 512 KiB"),
  language: z.enum(TOOLSET_LANGUAGES).default("typescript"),
});

export const tryItSchema = z.object({
  toolset: toolsetName,
  binding: z.string().trim().min(1).max(120),
  args: z.record(z.string(), z.unknown()),
  mode: z.enum(MODES),
});

/** One toolset for the detail page; versions carry the publisher's username. */
/**
 * A toolset as the console shows it. `hasFolder`: the toolsets folder (`root`) has a folder of
 * that name with a toolset file, so "Publish from folder" can publish it (an uploaded toolset
 * has none).
 */
export async function toolsetForConsole(db: Db, name: string, root: string) {
  const detail = await getToolset(db, name);
  const dir = isValidToolsetName(name) ? path.join(path.resolve(root), name) : undefined;
  const hasFolder =
    dir !== undefined &&
    (existsSync(path.join(dir, "toolset.ts")) || existsSync(path.join(dir, "toolset.py")));
  const ids = [...new Set(detail.versions.flatMap((v) => (v.publishedById ? [v.publishedById] : [])))];
  const users = ids.length
    ? await db.user.findMany({ where: { id: { in: ids } }, select: { id: true, username: true } })
    : [];
  const names = new Map(users.map((u) => [u.id, u.username]));
  return {
    ...detail,
    hasFolder,
    versions: detail.versions.map((v) => ({
      version: v.version,
      contentHash: v.contentHash,
      origin: v.origin,
      createdAt: v.createdAt,
      bindingCount: v.bindingCount,
      language: v.language,
      publishedBy: v.publishedById ? (names.get(v.publishedById) ?? null) : null,
    })),
  };
}

/** Publishes every folder under the toolsets directory (the console's Sync button). */
export async function syncFromFolder(db: Db, registry: RegistryCache, root: string, userId: string) {
  const result = await syncToolsetsFolder(db, root, { origin: "sync", userId });
  registry.invalidate();
  return {
    summary: result.summary,
    published: result.published.map((p) => ({
      name: p.name,
      status: p.status,
      version: p.version,
      message: p.message,
    })),
    failed: result.failed,
  };
}

/** Republishes one toolset from its folder under the toolsets directory. */
export async function publishFromFolder(
  db: Db,
  registry: RegistryCache,
  root: string,
  userId: string,
  name: string,
) {
  const parsed = toolsetName.safeParse(name);
  if (!parsed.success) throw new AppError("BAD_INPUT", parsed.error.issues[0]?.message ?? "bad name");
  // The name pattern has no dots or slashes, so the folder stays under the root.
  const dir = path.join(path.resolve(root), parsed.data);
  const result = await publishToolset(db, { dir, origin: "console", userId });
  registry.invalidate();
  return publishSummary(result);
}

export async function uploadToolset(
  db: Db,
  registry: RegistryCache,
  userId: string,
  input: z.input<typeof uploadSchema>,
) {
  const { name, doc, source, language } = uploadSchema.parse(input);
  const result = await publishToolset(db, {
    files: { doc, source, language },
    name,
    origin: "upload",
    userId,
  });
  registry.invalidate();
  return publishSummary(result);
}

function publishSummary(result: Awaited<ReturnType<typeof publishToolset>>) {
  return {
    name: result.name,
    status: result.status,
    version: result.version,
    contentHash: result.contentHash,
    changes: result.changes,
    message: result.message,
    warnings: result.warnings,
    pendingCategories: result.pendingCategories,
  };
}

export interface TryItResult {
  ok: boolean;
  value?: unknown;
  /** An AppError code, or CAPABILITY_FAILED when the binding's own code threw. */
  error?: { code: string; message: string };
  /** The gate's verdict, when the call reached the gate. */
  decision: "allow" | "deny" | "blocked" | null;
  reason: string | null;
  /** Set when the gate asked a human. */
  approvalId: string | null;
  ms: number;
}

/** The console session's identity for direct calls; grants are scoped to the console session. */
export function consoleSession(user: SessionUser, mode: Session["mode"]): Session {
  return {
    id: user.sessionId,
    userId: user.id,
    surface: "console",
    mode,
    mountedModules: ["*"],
    actorLabel: `${user.username} (console)`,
  };
}

/**
 * Calls one binding through run.invoke. Gate refusals and failures come back as values with
 * their codes, so the page can show what happened; the request's signal cancels a pending wait.
 */
export async function tryBinding(
  engine: Engine,
  user: SessionUser,
  input: z.input<typeof tryItSchema>,
  signal?: AbortSignal,
): Promise<TryItResult> {
  const { toolset, binding, args, mode } = tryItSchema.parse(input);
  const name = `${toolset}.${binding}`;
  const started = Date.now();
  let decision: TryItResult["decision"] = null;
  let reason: string | null = null;
  let approvalId: string | null = null;
  const onEvent = (event: EngineEvent) => {
    if (event.type === "approval.requested" && event.approval.capability === name) {
      approvalId = event.approval.id;
    }
    if (event.type === "gate.decision" && event.capability === name) {
      decision = event.decision;
      reason = event.reason;
      approvalId = event.approvalId ?? approvalId;
    }
  };
  try {
    const { value } = await engine.invoke({
      session: consoleSession(user, mode),
      name,
      args,
      onEvent,
      ...(signal ? { signal } : {}),
    });
    return { ok: true, value: value ?? null, decision, reason, approvalId, ms: Date.now() - started };
  } catch (error) {
    const code = isAppError(error) ? error.code : "CAPABILITY_FAILED";
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, error: { code, message }, decision, reason, approvalId, ms: Date.now() - started };
  }
}

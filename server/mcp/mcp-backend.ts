/**
 * The MCP surface's view of the engine: actions run with the key's user, mode and modules;
 * "allow for session" grants are scoped to the MCP session; images are served to their owner only.
 * An MCP client may DENY a pending request from its own prompt (elicitation), but never approve
 * it: an API key can never approve its own requests, and a client's prompt answer
 * cannot be told apart from one its agent forged.
 */

import type { TaskStore } from "@modelcontextprotocol/sdk/experimental/tasks/interfaces.js";
import { ACTION_CONTRACT, renderLibrarySignatures, renderModuleSignatures } from "../core/actions/contract";
import type { ObservationEnvelope } from "../core/actions/envelope";
import { planEnvelope } from "../core/actions/plan-run";
import type { RegisteredModule } from "../core/capabilities/registry";
import type { ClientToolRouter, Session } from "../core/capabilities/types";
import { AppError } from "../core/errors";
import type { ApprovalAnswer } from "../core/gate/approvals";
import type { EngineEvent } from "../core/gate/ports";
import type { LibraryModule } from "../core/libraries/types";
import type { SkillStore } from "../core/skills";
import type { Db } from "../db";
import type { ServerEngine } from "../engine";
import type { ApiKeyIdentity } from "../services/api-keys";
import { createMcpTaskStore, createTaskCancelWatch } from "../services/mcp-tasks";
import { cardUrl } from "../services/notifications/message";

/** What the MCP surface (server/mcp) needs from the engine; server/mcp only adapts the protocol. */
export interface PendingApprovalInfo {
  id: string;
  capability: string;
  category: string;
  /** The argument snapshot the approver will see, as JSON text. */
  argsPreview: string;
  expiresAt: number;
}

export interface ExecuteResult {
  envelope: ObservationEnvelope;
  parked?: { approvalId: string };
}

export interface McpBackend {
  /** The action contract, the mounted modules' signatures, and the capabilities resource. */
  describe(identity: ApiKeyIdentity): Promise<{ toolDescription: string; capabilities: unknown }>;
  execute(input: {
    identity: ApiKeyIdentity;
    /** The MCP session: "allow for session" grants are scoped to it. */
    sessionId: string;
    code: string;
    title?: string;
    /** A plan id: ask for the whole plan, then run the code with exactly its calls granted. */
    plan?: string;
    /** JSON-RPC id of the tools/call, so a notifications/cancelled reaching any instance finds the run. */
    requestId?: string;
    signal: AbortSignal;
    /** The MCP client as the run's toolstore/ui client (absent: a headless run, such as a task). */
    client?: ClientToolRouter;
    onApprovalPending(info: PendingApprovalInfo): void;
    /** The run has its id (and a row): toolstore://runs/<id> answers from now on. */
    onRunStarted?(runId: string): void;
    onApprovalSettled(id: string): void;
    /**
     * Let go once the run parks (a task): `parked` is then set, `envelope` only says so, and the
     * run's lifecycle finishes the task on whichever instance resumes it.
     */
    detachOnPark?: boolean;
  }): Promise<ExecuteResult>;
  /** An image the key's user may see, or null (unknown or not theirs: the same answer). */
  image(identity: ApiKeyIdentity, assetId: string): Promise<{ mime: string; base64: string } | null>;
  /** An answer a human gave in the MCP client's elicitation prompt. */
  answerFromClient(identity: ApiKeyIdentity, approvalId: string, answer: ApprovalAnswer): Promise<void>;
  approvalUrl(approvalId: string): string;
  /** The skills this key may read (served as skill:// resources), or null when it mounts no toolstore/skills. */
  skills?(identity: ApiKeyIdentity): SkillStore | null;
  /**
   * Where execute_code tasks of this key live (MCP tasks, protocol 2025-11-25). Without it the
   * server does not offer tasks and every call runs in its request.
   */
  taskStore?(identity: ApiKeyIdentity): TaskStore;
  /** Calls `onCancel` once a client cancels the task (one poll for all the tasks of the process). */
  watchTaskCancel?(taskId: string, onCancel: () => void): () => void;
  /**
   * notifications/cancelled for a request of this key's MCP session: cancels the run it started,
   * on whichever instance runs it. False when no such run is running.
   */
  cancelRequest(identity: ApiKeyIdentity, mcpSessionId: string, requestId: string): Promise<boolean>;
  /** A run's state for toolstore://runs/<id>: the key's own runs only (null otherwise). */
  runState(identity: ApiKeyIdentity, runId: string): Promise<RunState | null>;
  /** The key's latest runs, newest first (the resource template's list). */
  recentRuns(
    identity: ApiKeyIdentity,
    limit: number,
  ): Promise<{ id: string; title: string; status: string }[]>;
}

export interface RunState {
  id: string;
  /** running | ok | error | interrupted */
  status: string;
  title: string;
  startedAt: string;
  finishedAt: string | null;
  /** The observation envelope once finished (an interrupted run's lists the calls the audit saw). */
  envelope: ObservationEnvelope | null;
}

const PREVIEW_CHARS = 400;
const DESCRIBE_CACHE_MS = 1_000;

function mcpSession(identity: ApiKeyIdentity, mcpSessionId: string): Session {
  return {
    id: `mcp:${mcpSessionId || identity.id}`,
    userId: identity.userId,
    surface: "mcp",
    mode: identity.mode,
    mountedModules: identity.modules,
    apiKeyId: identity.id,
    actorLabel: `key "${identity.name}"`,
  };
}

export function capabilitiesDocument(modules: RegisteredModule[], libraries: readonly LibraryModule[] = []) {
  return {
    /** Pure functions run inside the action: no category, no gate, no approval. */
    libraries: libraries.map((l) => ({
      module: `toolstore/lib/${l.name}`,
      kind: "library",
      description: l.description,
      builtOn: l.builtOn,
      exports: l.exports.map((e) => ({ name: e.name, description: e.description, signature: e.signature })),
    })),
    modules: modules.map((m) => ({
      module: `toolstore/${m.name}`,
      description: m.description,
      source: m.source,
      exports: m.exports.map((e) => ({
        name: e.exportName,
        capability: e.name,
        description: e.spec.description,
        category: e.spec.category,
        inputSchema: e.spec.inputSchema,
      })),
    })),
  };
}

type BackendDeps = { db: Db; engine: () => Promise<ServerEngine>; publicUrl: string };
type Described = { toolDescription: string; capabilities: unknown };

/**
 * Every MCP request builds its server, so the description is asked for on every call; the
 * registry's own cache lives about a second, and so does this one.
 */
function createCachedDescribe(engineOf: () => Promise<ServerEngine>): McpBackend["describe"] {
  const described = new Map<string, { at: number; value: Promise<Described> }>();
  return (identity) => {
    const cacheKey = `${identity.mode}|${identity.modules.join(",")}`;
    const hit = described.get(cacheKey);
    if (hit && Date.now() - hit.at < DESCRIBE_CACHE_MS) return hit.value;
    const value = (async () => {
      const engine = await engineOf();
      const modules = await engine.registry.mountedModules(mcpSession(identity, ""));
      const signatures = renderModuleSignatures(modules);
      const libraries = engine.libraries.list();
      const libs = libraries.length
        ? `\n\nLibraries (every key):\n\n${renderLibrarySignatures(libraries)}`
        : "";
      return {
        toolDescription: `${ACTION_CONTRACT}\n\nModules mounted for this key (mode: ${identity.mode}):\n\n${signatures || "(none)"}${libs}`,
        capabilities: capabilitiesDocument(modules, libraries),
      };
    })();
    value.catch(() => described.delete(cacheKey));
    if (described.size > 100) described.clear();
    described.set(cacheKey, { at: Date.now(), value });
    return value;
  };
}

/** A pending approval as the MCP client is told about it: the arguments cut to a preview. */
export function pendingApprovalInfo(approval: {
  id: string;
  capability: string;
  category: string;
  args: unknown;
  expiresAt: number;
}): PendingApprovalInfo {
  const args = JSON.stringify(approval.args);
  return {
    id: approval.id,
    capability: approval.capability,
    category: approval.category,
    argsPreview:
      args.length > PREVIEW_CHARS ? `${args.slice(0, PREVIEW_CHARS)}… (${args.length} chars)` : args,
    expiresAt: approval.expiresAt,
  };
}

function createExecute(engineOf: () => Promise<ServerEngine>): McpBackend["execute"] {
  return async ({
    identity,
    sessionId,
    code,
    title,
    plan,
    requestId,
    signal,
    client,
    onApprovalPending,
    onApprovalSettled,
    onRunStarted,
    detachOnPark,
  }) => {
    const engine = await engineOf();
    const input = {
      code,
      session: mcpSession(identity, sessionId),
      ...(title ? { title } : {}),
      ...(requestId ? { mcpRequestId: requestId } : {}),
      signal,
      ...(client ? { client } : {}),
      ...(detachOnPark ? { detachOnPark } : {}),
      onEvent(event: EngineEvent) {
        if (event.type === "run.started") {
          onRunStarted?.(event.runId);
        } else if (event.type === "approval.requested") {
          onApprovalPending(pendingApprovalInfo(event.approval));
        } else if (event.type === "approval.decided" || event.type === "approval.expired") {
          onApprovalSettled(event.approvalId);
        }
      },
    };
    if (!plan) {
      const { envelope, parked } = await engine.run(input);
      return parked ? { envelope, parked } : { envelope };
    }
    return { envelope: await planEnvelope(() => engine.runPlan({ ...input, planId: plan })) };
  };
}

/** The key's runs: cancelling one by its MCP request, its state, the latest ones. */
function createRunQueries(deps: BackendDeps): Pick<McpBackend, "cancelRequest" | "runState" | "recentRuns"> {
  return {
    async cancelRequest(identity, mcpSessionId, requestId) {
      const engine = await deps.engine();
      // A run started moments ago may have its row still queued for a group commit.
      await engine.flush();
      const run = await deps.db.actionRun.findFirst({
        where: {
          sessionId: mcpSession(identity, mcpSessionId).id,
          apiKeyId: identity.id,
          mcpRequestId: requestId,
          status: "running",
        },
        select: { id: true },
      });
      if (!run) return false;
      return engine.cancel(run.id, "the MCP client cancelled the request before it was approved");
    },

    async runState(identity, runId) {
      const run = await deps.db.actionRun.findUnique({
        where: { id: runId },
        select: {
          id: true,
          apiKeyId: true,
          status: true,
          title: true,
          startedAt: true,
          finishedAt: true,
          envelope: true,
        },
      });
      // Someone else's run and no run at all get the same answer.
      if (!run || run.apiKeyId !== identity.id) return null;
      return {
        id: run.id,
        status: run.status,
        title: run.title,
        startedAt: run.startedAt.toISOString(),
        finishedAt: run.finishedAt?.toISOString() ?? null,
        envelope: run.envelope ? (JSON.parse(run.envelope) as ObservationEnvelope) : null,
      };
    },

    async recentRuns(identity, limit) {
      return deps.db.actionRun.findMany({
        where: { apiKeyId: identity.id },
        orderBy: { startedAt: "desc" },
        take: limit,
        select: { id: true, title: true, status: true },
      });
    },
  };
}

export function createMcpBackend(deps: BackendDeps): McpBackend {
  const cancels = createTaskCancelWatch(deps.db);
  return {
    watchTaskCancel: cancels.watch,
    describe: createCachedDescribe(deps.engine),
    execute: createExecute(deps.engine),
    ...createRunQueries(deps),

    async image(identity, assetId) {
      const asset = await deps.db.imageAsset.findUnique({
        where: { id: assetId },
        select: { mime: true, bytes: true, userId: true },
      });
      if (!asset || asset.userId !== identity.userId) return null;
      return { mime: asset.mime, base64: Buffer.from(asset.bytes).toString("base64") };
    },

    async answerFromClient(identity, approvalId, answer) {
      if (answer !== "deny") {
        throw new AppError(
          "FORBIDDEN",
          "An API key cannot approve its own requests; approve it in the console.",
        );
      }
      const engine = await deps.engine();
      const approval = await deps.db.approval.findUnique({
        where: { id: approvalId },
        select: { apiKeyId: true },
      });
      if (!approval || approval.apiKeyId !== identity.id) return;
      await engine.approvals.decide({
        approvalId,
        answer: "deny",
        decidedBy: {
          userId: null,
          apiKeyId: null,
          label: `key "${identity.name}" (declined in the MCP client)`,
        },
      });
    },

    approvalUrl(approvalId) {
      // The card's own page (after sign-in if needed), as notifications link it.
      return cardUrl(deps.publicUrl, approvalId);
    },

    skills(identity) {
      // The same rule as the catalog: skills are readable where toolstore/skills is mounted.
      if (!identity.modules.includes("*") && !identity.modules.includes("skills")) return null;
      return {
        list: async () => (await deps.engine()).sources.skills.store.list(),
        get: async (name) => (await deps.engine()).sources.skills.store.get(name),
        readFile: async (name, path) => (await deps.engine()).sources.skills.store.readFile(name, path),
      };
    },

    taskStore(identity) {
      return createMcpTaskStore(deps.db, identity.id, async () => (await deps.engine()).instanceId, {
        // A task's run may be parked with nobody here holding it: cancel the run itself.
        async cancelled(runId) {
          await (await deps.engine()).cancel(runId, "the client cancelled the task");
        },
      });
    },
  };
}

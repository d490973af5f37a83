/**
 * Action runs for the console: the filtered history and one run's detail (code, envelope, gate
 * decisions with their approvals, images, and for a durable run how often it was replayed, which
 * calls its last replay answered from the journal, and what a parked run waits for). Every row
 * selects its fields explicitly; names of users and keys are looked up in one query each, since
 * ActionRun stores only their ids.
 */
import { z } from "zod";
import type { ObservationEnvelope } from "../core/actions/envelope";
import { isUnfinished } from "../core/actions/ports";
import type { CallRecord } from "../core/capabilities/invoke";
import { SURFACES } from "../core/capabilities/types";
import { AppError } from "../core/errors";
import type { ApprovalKind } from "../core/gate/ports";
import type { Db } from "../db";

export const RUN_STATUSES = ["queued", "running", "waiting", "ok", "error", "interrupted"] as const;
const PAGE_SIZE = 50;

const blankToUndefined = (v: unknown) => (typeof v === "string" && v.trim() === "" ? undefined : v);

export const runFiltersSchema = z.object({
  surface: z.preprocess(blankToUndefined, z.enum(SURFACES).optional()).catch(undefined),
  status: z.preprocess(blankToUndefined, z.enum(RUN_STATUSES).optional()).catch(undefined),
  /** An API key id. */
  key: z.preprocess(blankToUndefined, z.string().max(100).optional()).catch(undefined),
  /** A capability name; `module.*` matches every export of the module. */
  capability: z.preprocess(blankToUndefined, z.string().trim().max(200).optional()).catch(undefined),
  /** Cursor: runs started before this run (the last row of the previous page). */
  before: z.preprocess(blankToUndefined, z.string().max(100).optional()).catch(undefined),
});
export type RunFilters = z.infer<typeof runFiltersSchema>;

/** Query parameters (strings or string arrays) to filters; unknown values are dropped, never errors. */
export function parseRunFilters(params: Record<string, string | string[] | undefined>): RunFilters {
  const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
  return runFiltersSchema.parse({
    surface: first(params.surface),
    status: first(params.status),
    key: first(params.key),
    capability: first(params.capability),
    before: first(params.before),
  });
}

async function names(db: Db, userIds: (string | null)[], keyIds: (string | null)[]) {
  const uniq = (ids: (string | null)[]) => [...new Set(ids.filter((v): v is string => !!v))];
  const [users, keys] = await Promise.all([
    db.user.findMany({ where: { id: { in: uniq(userIds) } }, select: { id: true, displayName: true } }),
    db.apiKey.findMany({ where: { id: { in: uniq(keyIds) } }, select: { id: true, name: true } }),
  ]);
  return {
    user: new Map(users.map((u) => [u.id, u.displayName])),
    key: new Map(keys.map((k) => [k.id, k.name])),
  };
}

function capabilityWhere(capability: string | undefined) {
  if (!capability) return undefined;
  const where = capability.endsWith(".*")
    ? { capability: { startsWith: capability.slice(0, -1) } }
    : { capability };
  return { some: where };
}

export async function listRuns(db: Db, filters: RunFilters) {
  let cursorDate: Date | undefined;
  if (filters.before) {
    const cursor = await db.actionRun.findUnique({
      where: { id: filters.before },
      select: { startedAt: true },
    });
    cursorDate = cursor?.startedAt;
  }
  const rows = await db.actionRun.findMany({
    where: {
      ...(filters.surface ? { surface: filters.surface } : {}),
      ...(filters.status ? { status: filters.status } : {}),
      ...(filters.key ? { apiKeyId: filters.key } : {}),
      ...(filters.capability ? { decisions: capabilityWhere(filters.capability) } : {}),
      ...(cursorDate ? { startedAt: { lt: cursorDate } } : {}),
    },
    orderBy: [{ startedAt: "desc" }, { id: "desc" }],
    take: PAGE_SIZE + 1,
    select: {
      id: true,
      title: true,
      surface: true,
      mode: true,
      status: true,
      errorKind: true,
      userId: true,
      apiKeyId: true,
      startedAt: true,
      durationMs: true,
      _count: { select: { decisions: true } },
    },
  });
  const page = rows.slice(0, PAGE_SIZE);
  const n = await names(
    db,
    page.map((r) => r.userId),
    page.map((r) => r.apiKeyId),
  );
  return {
    runs: page.map((r) => ({
      id: r.id,
      title: r.title,
      surface: r.surface,
      mode: r.mode,
      status: r.status,
      errorKind: r.errorKind,
      startedAt: r.startedAt.toISOString(),
      durationMs: r.durationMs,
      calls: r._count.decisions,
      who: r.apiKeyId
        ? `key "${n.key.get(r.apiKeyId) ?? r.apiKeyId.slice(-6)}"`
        : (n.user.get(r.userId ?? "") ?? "—"),
    })),
    nextBefore: rows.length > PAGE_SIZE ? page[page.length - 1]?.id : undefined,
  };
}

/** Choices for the filter bar: keys and capability names. */
export async function runFilterOptions(db: Db) {
  const [keys, capabilities] = await Promise.all([
    db.apiKey.findMany({ orderBy: { createdAt: "desc" }, select: { id: true, name: true, prefix: true } }),
    db.capability.findMany({ where: { active: true }, orderBy: { name: "asc" }, select: { name: true } }),
  ]);
  return { keys, capabilities: capabilities.map((c) => c.name) };
}

/** One line of a run's gate-decision timeline, built from stored decisions and approvals. */
export interface TimelineRow {
  key: string;
  at: number;
  capability: string;
  category: string | null;
  /** invalid: refused before the gate (unknown capability, arguments that fail the schema). */
  state: "waiting" | "allow" | "deny" | "blocked" | "expired" | "abandoned" | "invalid";
  reason: string;
  ms: number | null;
  approvalId: string | null;
  /** Set when the capability's impl finished (live view only): did it succeed. */
  callOk?: boolean;
  /** Answered from the run's journal on its last replay: the impl did not run again. */
  replayed?: boolean;
  approval: {
    /** `uncertain`: asks whether a call that may already have happened runs again. */
    kind?: ApprovalKind;
    status: string;
    scope: string | null;
    decidedBy: string | null;
    expiresAt: number;
    /** Why it expired or was abandoned (the run died, was cancelled), when known. */
    endReason?: string | null;
  } | null;
}

export async function getRunDetail(db: Db, id: string) {
  const run = await db.actionRun.findUnique({
    where: { id },
    select: {
      id: true,
      sessionId: true,
      title: true,
      surface: true,
      mode: true,
      status: true,
      errorKind: true,
      code: true,
      envelope: true,
      userId: true,
      apiKeyId: true,
      startedAt: true,
      finishedAt: true,
      durationMs: true,
      replays: true,
      waitingFor: true,
      parkedAt: true,
      decisions: {
        orderBy: { createdAt: "asc" },
        select: {
          id: true,
          capability: true,
          category: true,
          decision: true,
          reason: true,
          approvalId: true,
          argsHash: true,
          seq: true,
          ms: true,
          createdAt: true,
        },
      },
      approvals: {
        orderBy: { createdAt: "asc" },
        select: {
          id: true,
          capability: true,
          category: true,
          kind: true,
          argsHash: true,
          status: true,
          scope: true,
          expiresAt: true,
          createdAt: true,
          endReason: true,
          decidedBy: { select: { displayName: true } },
        },
      },
      images: { orderBy: { createdAt: "asc" }, select: { id: true, mime: true, width: true, height: true } },
    },
  });
  if (!run) throw new AppError("NOT_FOUND", `run ${id} does not exist`);
  const n = await names(db, [run.userId], [run.apiKeyId]);
  let envelope: ObservationEnvelope | null = null;
  if (run.envelope) {
    try {
      envelope = JSON.parse(run.envelope) as ObservationEnvelope;
    } catch {
      envelope = null;
    }
  }
  const waitingFor =
    run.status === "waiting" ? run.approvals.find((a) => a.id === run.waitingFor) : undefined;
  return {
    id: run.id,
    sessionId: run.sessionId,
    title: run.title,
    surface: run.surface,
    mode: run.mode,
    status: run.status,
    errorKind: run.errorKind,
    code: run.code,
    envelope,
    who: run.apiKeyId
      ? `key "${n.key.get(run.apiKeyId) ?? run.apiKeyId.slice(-6)}"`
      : (n.user.get(run.userId ?? "") ?? "—"),
    startedAt: run.startedAt.toISOString(),
    finishedAt: run.finishedAt?.toISOString() ?? null,
    durationMs: run.durationMs,
    /** Times the action was run again from its journal (resumed after a park, or after a crash). */
    replays: run.replays,
    /** A parked run: since when, and the approval it waits for (null when it is not parked). */
    parked:
      run.status === "waiting"
        ? {
            since: run.parkedAt?.toISOString() ?? null,
            approvalId: run.waitingFor,
            capability: waitingFor?.capability ?? null,
            kind: (waitingFor?.kind === "uncertain" ? "uncertain" : "call") as ApprovalKind,
          }
        : null,
    timeline: [
      ...closeWaitingRows(
        buildTimeline(run.decisions, run.approvals, envelope?.calls),
        !isUnfinished(run.status),
      ),
      ...refusedRows(envelope, run.finishedAt ?? run.startedAt),
    ],
    images: run.images,
  };
}

/**
 * Calls refused before the gate have no decision row; the stored envelope lists them. They are
 * shown after the decided calls, at the time the run finished.
 */
function refusedRows(envelope: ObservationEnvelope | null, at: Date): TimelineRow[] {
  return (envelope?.calls ?? [])
    .filter((c) => c.decision === "invalid")
    .map((c, i) => ({
      key: `invalid-${i}`,
      at: at.getTime(),
      capability: c.capability,
      category: c.category,
      state: "invalid" as const,
      reason: c.reason ?? "refused before the gate",
      ms: c.ms,
      approvalId: null,
      approval: null,
    }));
}

/** A finished run can no longer be answered: its unanswered requests show as expired. */
function closeWaitingRows(rows: TimelineRow[], finished: boolean): TimelineRow[] {
  if (!finished) return rows;
  return rows.map((r) =>
    r.state === "waiting" ? { ...r, state: "expired", reason: "the run ended before anyone answered" } : r,
  );
}

/**
 * Which decision rows the last attempt answered from the journal, from the stored envelope (its
 * `calls` carry `replayed`). A journal row is written once per call, in call order, so the k-th
 * decision row of a capability is the k-th envelope line of that capability.
 */
function replayedLines(calls: readonly CallRecord[]): (capability: string) => boolean {
  const flags = new Map<string, boolean[]>();
  for (const call of calls) {
    if (call.decision === "invalid") continue;
    flags.set(call.capability, [...(flags.get(call.capability) ?? []), call.replayed === true]);
  }
  return (capability) => flags.get(capability)?.shift() === true;
}

const UNCERTAIN_REASON = "its server process stopped while the call ran: it may already have happened";

/** The state of a decision row: a call that waited (`ask`) or whose effect is uncertain follows its approval. */
function decisionState(decision: string, approval: { status: string; kind?: string } | undefined) {
  if ((decision === "ask" || approval?.kind === "uncertain") && approval) {
    if (approval.status === "pending") return "waiting";
    if (approval.status === "allowed") return "allow";
    if (approval.status === "expired" || approval.status === "abandoned") return approval.status;
    return "deny";
  }
  return (["allow", "deny", "blocked"].includes(decision) ? decision : "deny") as TimelineRow["state"];
}

/**
 * Decisions in order; an approval with no decision yet (still waiting, or expired) gets its own
 * row. A call whose server process died inside it points at the `uncertain` approval that asks
 * whether to run it again; the approval its first attempt was allowed with needs no row of its own.
 */
export function buildTimeline(
  decisions: {
    id: string;
    capability: string;
    category: string;
    decision: string;
    reason: string;
    approvalId: string | null;
    argsHash?: string;
    /** The call's place in its run (journal rows); orders the rows when present. */
    seq?: number | null;
    ms: number;
    createdAt: Date;
  }[],
  approvals: {
    id: string;
    capability: string;
    category: string;
    kind?: string;
    argsHash?: string;
    status: string;
    scope: string | null;
    expiresAt: Date;
    createdAt: Date;
    endReason?: string | null;
    decidedBy: { displayName: string } | null;
  }[],
  envelopeCalls: readonly CallRecord[] = [],
): TimelineRow[] {
  const byApproval = new Map(approvals.map((a) => [a.id, a]));
  const used = new Set<string>();
  const replayed = replayedLines(envelopeCalls);
  const approvalOf = (id: string | null) => {
    const a = id ? byApproval.get(id) : undefined;
    if (!a) return null;
    used.add(a.id);
    return {
      ...(a.kind === "uncertain" ? { kind: "uncertain" as const } : {}),
      status: a.status,
      scope: a.scope,
      decidedBy: a.decidedBy?.displayName ?? null,
      expiresAt: a.expiresAt.getTime(),
      endReason: a.endReason ?? null,
    };
  };
  const ordered = [...decisions].sort(
    (x, y) => (x.seq ?? Number.MAX_SAFE_INTEGER) - (y.seq ?? Number.MAX_SAFE_INTEGER),
  );
  const rows: TimelineRow[] = ordered.map((d) => {
    const linked = d.approvalId ? byApproval.get(d.approvalId) : undefined;
    const state = decisionState(d.decision, linked);
    const uncertain = linked?.kind === "uncertain";
    return {
      key: d.id,
      at: d.createdAt.getTime() - d.ms,
      capability: d.capability,
      category: d.category,
      state,
      reason: uncertain && state === "waiting" ? UNCERTAIN_REASON : d.reason,
      ms: d.ms,
      approvalId: d.approvalId,
      approval: approvalOf(d.approvalId),
      ...(replayed(d.capability) ? { replayed: true } : {}),
    };
  });
  const decided = new Set(decisions.map((d) => `${d.capability}\n${d.argsHash ?? ""}`));
  const pending: TimelineRow[] = [];
  for (const a of approvals) {
    if (used.has(a.id)) continue;
    // Allowed, and its call has a decision row that now points at a later request (uncertain).
    if (a.status === "allowed" && a.argsHash && decided.has(`${a.capability}\n${a.argsHash}`)) continue;
    pending.push({
      key: a.id,
      at: a.createdAt.getTime(),
      capability: a.capability,
      category: a.category,
      state:
        a.status === "pending"
          ? "waiting"
          : a.status === "expired" || a.status === "abandoned"
            ? a.status
            : "deny",
      reason:
        a.status === "pending"
          ? a.kind === "uncertain"
            ? UNCERTAIN_REASON
            : "waiting for a human"
          : (a.endReason ?? `approval ${a.status}`),
      ms: null,
      approvalId: a.id,
      approval: approvalOf(a.id),
    });
  }
  return mergeByTime(
    seqOrdered(rows, ordered),
    pending.sort((x, y) => x.at - y.at),
  );
}

/**
 * Decision rows in call order: by `seq` when every row has one (a journal row's time is that of
 * its first write, while `ms` may include a wait for a human), else by time.
 */
function seqOrdered(rows: TimelineRow[], decisions: { seq?: number | null }[]): TimelineRow[] {
  if (decisions.every((d) => typeof d.seq === "number")) return rows;
  return [...rows].sort((x, y) => x.at - y.at);
}

/** Merges approval-only rows (by time) into the ordered decision rows. */
function mergeByTime(decided: TimelineRow[], loose: TimelineRow[]): TimelineRow[] {
  const out: TimelineRow[] = [];
  let j = 0;
  for (const row of decided) {
    while (j < loose.length && (loose[j] as TimelineRow).at < row.at) out.push(loose[j++] as TimelineRow);
    out.push(row);
  }
  return [...out, ...loose.slice(j)];
}

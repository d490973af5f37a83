/**
 * Action runs for the console: the filtered history and one run's detail (code, envelope, gate
 * decisions with their approvals, images). Every row selects its fields explicitly; names of
 * users and keys are looked up in one query each, since ActionRun stores only their ids.
 */
import { z } from "zod";
import type { ObservationEnvelope } from "../core/actions/envelope";
import { SURFACES } from "../core/capabilities/types";
import { AppError } from "../core/errors";
import type { Db } from "../db";

export const RUN_STATUSES = ["queued", "running", "ok", "error", "interrupted"] as const;
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
  approval: {
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
      decisions: {
        orderBy: { createdAt: "asc" },
        select: {
          id: true,
          capability: true,
          category: true,
          decision: true,
          reason: true,
          approvalId: true,
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
    timeline: [
      ...closeWaitingRows(buildTimeline(run.decisions, run.approvals), run.status !== "running"),
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

/** Decisions in order; an approval with no decision yet (still waiting, or expired) gets its own row. */
export function buildTimeline(
  decisions: {
    id: string;
    capability: string;
    category: string;
    decision: string;
    reason: string;
    approvalId: string | null;
    ms: number;
    createdAt: Date;
  }[],
  approvals: {
    id: string;
    capability: string;
    category: string;
    status: string;
    scope: string | null;
    expiresAt: Date;
    createdAt: Date;
    endReason?: string | null;
    decidedBy: { displayName: string } | null;
  }[],
): TimelineRow[] {
  const byApproval = new Map(approvals.map((a) => [a.id, a]));
  const used = new Set<string>();
  const approvalOf = (id: string | null) => {
    const a = id ? byApproval.get(id) : undefined;
    if (!a) return null;
    used.add(a.id);
    return {
      status: a.status,
      scope: a.scope,
      decidedBy: a.decidedBy?.displayName ?? null,
      expiresAt: a.expiresAt.getTime(),
      endReason: a.endReason ?? null,
    };
  };
  const rows: TimelineRow[] = decisions.map((d) => ({
    key: d.id,
    at: d.createdAt.getTime() - d.ms,
    capability: d.capability,
    category: d.category,
    state: (["allow", "deny", "blocked"].includes(d.decision) ? d.decision : "deny") as TimelineRow["state"],
    reason: d.reason,
    ms: d.ms,
    approvalId: d.approvalId,
    approval: approvalOf(d.approvalId),
  }));
  for (const a of approvals) {
    if (used.has(a.id)) continue;
    rows.push({
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
      reason: a.status === "pending" ? "waiting for a human" : (a.endReason ?? `approval ${a.status}`),
      ms: null,
      approvalId: a.id,
      approval: approvalOf(a.id),
    });
  }
  return rows.sort((x, y) => x.at - y.at);
}

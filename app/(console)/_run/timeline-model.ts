/**
 * The gate-decision timeline of one run, built live from engine events (playground, running
 * run pages) or from stored records (server/services/runs.ts buildTimeline): the same rows.
 */
import { isLiveEventType } from "@/server/core/event-types";
import type { TimelineRow } from "@/server/services/runs";

export type { TimelineRow };

type Payload = Record<string, unknown>;

const str = (v: unknown): string | null => (typeof v === "string" ? v : null);
const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

function update(rows: TimelineRow[], index: number, patch: Partial<TimelineRow>): TimelineRow[] {
  const next = rows.slice();
  next[index] = { ...(rows[index] as TimelineRow), ...patch };
  return next;
}

/** When the run is over nothing can be answered any more: a call still shown as waiting was not. */
export function closeWaiting(rows: TimelineRow[]): TimelineRow[] {
  if (!rows.some((r) => r.state === "waiting")) return rows;
  return rows.map((r) =>
    r.state === "waiting" ? { ...r, state: "expired", reason: "the run ended before anyone answered" } : r,
  );
}

/** Applies one engine event of the run; unknown events leave the rows as they are. */
export function applyRunEvent(rows: TimelineRow[], type: string, raw: unknown, seq: number): TimelineRow[] {
  if (!isLiveEventType(type)) return rows;
  const p = (raw ?? {}) as Payload;
  switch (type) {
    case "approval.requested": {
      const a = (p.approval ?? {}) as Payload;
      const id = str(a.id);
      if (!id || rows.some((r) => r.approvalId === id)) return rows;
      return [
        ...rows,
        {
          key: id,
          at: num(a.createdAt) ?? num(p.at) ?? Date.now(),
          capability: str(a.capability) ?? "?",
          category: str(a.category),
          state: "waiting",
          reason: "waiting for a human",
          ms: null,
          approvalId: id,
          approval: { status: "pending", scope: null, decidedBy: null, expiresAt: num(a.expiresAt) ?? 0 },
        },
      ];
    }
    case "approval.decided":
    case "approval.expired": {
      const i = rows.findIndex((r) => r.approvalId === str(p.approvalId));
      if (i < 0) return rows;
      const row = rows[i] as TimelineRow;
      const status = type === "approval.expired" ? "expired" : (str(p.status) ?? "denied");
      return update(rows, i, {
        state:
          row.state === "waiting"
            ? status === "allowed"
              ? "allow"
              : status === "expired"
                ? "expired"
                : "deny"
            : row.state,
        approval: {
          status,
          scope: str(p.scope),
          decidedBy: str(p.decidedBy) || row.approval?.decidedBy || null,
          expiresAt: row.approval?.expiresAt ?? 0,
        },
      });
    }
    case "gate.decision": {
      const decision = str(p.decision);
      const state = decision === "allow" || decision === "deny" || decision === "blocked" ? decision : "deny";
      const approvalId = str(p.approvalId);
      const i = approvalId ? rows.findIndex((r) => r.approvalId === approvalId) : -1;
      const ms = num(p.ms);
      const patch = { state, reason: str(p.reason) ?? "", ms } as const;
      if (i >= 0) return update(rows, i, patch);
      return [
        ...rows,
        {
          key: `d${seq}`,
          at: (num(p.at) ?? Date.now()) - (ms ?? 0),
          capability: str(p.capability) ?? "?",
          category: str(p.category),
          approvalId,
          approval: null,
          ...patch,
        },
      ];
    }
    case "call.refused": {
      const fields = Array.isArray(p.fields) ? (p.fields as Payload[]) : [];
      const named = fields
        .map((f) => `${str(f.field) || "arguments"} ${str(f.reason) ?? "is invalid"}`)
        .join("; ");
      return [
        ...rows,
        {
          key: `r${seq}`,
          at: num(p.at) ?? Date.now(),
          capability: str(p.capability) ?? "?",
          category: str(p.category),
          state: "invalid",
          reason: named ? `refused: ${named}` : (str(p.reason) ?? "refused before the gate"),
          ms: null,
          approvalId: null,
          approval: null,
        },
      ];
    }
    case "call.finished": {
      const capability = str(p.capability);
      for (let i = rows.length - 1; i >= 0; i--) {
        const r = rows[i] as TimelineRow;
        if (r.capability === capability && r.state === "allow" && r.callOk === undefined) {
          return update(rows, i, { callOk: p.ok === true, ms: num(p.ms) ?? r.ms });
        }
      }
      return rows;
    }
    default:
      return rows;
  }
}

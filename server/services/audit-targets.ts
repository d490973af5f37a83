/**
 * What the audit log records for each admin action of the console: the target and its state
 * before and after, read with explicit selects (a secret's value is never read here). The tRPC
 * layer audits every mutation of an approver or admin; a path listed here gets its state too.
 */
import type { Db } from "../db";
import { DEFAULT_MODE_KEY } from "./policy-rules";

export interface AuditTarget {
  target: string;
  /** Reads the state of the target (null when it does not exist). */
  state(): Promise<unknown>;
}

type Input = Record<string, unknown>;
const str = (v: unknown) => (typeof v === "string" ? v : "");

async function toolsetEnvState(db: Db, toolset: string, name: string) {
  const row = await db.toolsetEnvVar.findFirst({
    where: { name, toolset: { name: toolset } },
    select: { name: true, secret: true, updatedAt: true },
  });
  return row ? { name: row.name, secret: row.secret, updatedAt: row.updatedAt.toISOString() } : null;
}

const TARGETS: Record<string, (db: Db, input: Input) => AuditTarget> = {
  "apiKeys.revoke": (db, input) => ({
    target: `api_key:${str(input.id)}`,
    state: () =>
      db.apiKey.findUnique({
        where: { id: str(input.id) },
        select: { name: true, prefix: true, mode: true, modules: true, revokedAt: true, userId: true },
      }),
  }),
  "apiKeys.revokeGrant": (db, input) => ({
    target: `oauth_grant:${str(input.id)}`,
    state: () =>
      db.oAuthGrant.findUnique({
        where: { id: str(input.id) },
        select: { clientId: true, userId: true, resource: true, revokedAt: true },
      }),
  }),
  "rules.update": (db, input) => ruleTarget(db, str(input.id)),
  "rules.setEnabled": (db, input) => ruleTarget(db, str(input.id)),
  "rules.delete": (db, input) => ruleTarget(db, str(input.id)),
  "rules.setDefaultMode": (db) => settingTarget(db, DEFAULT_MODE_KEY),
  "users.setRole": (db, input) => ({
    target: `user:${str(input.userId)}`,
    state: () =>
      db.user.findUnique({ where: { id: str(input.userId) }, select: { username: true, role: true } }),
  }),
  "capabilities.changeCategory": (db, input) => capabilityTarget(db, str(input.capability)),
  "capabilities.decidePending": (db, input) => capabilityTarget(db, str(input.capability)),
  "capabilities.acceptReview": (db, input) => capabilityTarget(db, str(input.capability)),
  "toolsets.setEnv": (db, input) => envTarget(db, str(input.toolset), str(input.name)),
  "toolsets.unsetEnv": (db, input) => envTarget(db, str(input.toolset), str(input.name)),
  "toolsets.updateSettings": (db, input) => ({
    target: `toolset:${str(input.name)}`,
    state: () =>
      db.toolset.findUnique({
        where: { name: str(input.name) },
        select: { timeoutMs: true, allowedHosts: true },
      }),
  }),
  "approvals.revokeSessionGrants": (db, input) => ({
    target: `session:${str(input.sessionId)}`,
    state: () =>
      db.sessionGrant
        .count({ where: { sessionId: str(input.sessionId), revokedAt: null } })
        .then((active) => ({
          activeGrants: active,
        })),
  }),
};

function envTarget(db: Db, toolset: string, name: string): AuditTarget {
  return { target: `toolset:${toolset}/${name}`, state: () => toolsetEnvState(db, toolset, name) };
}

function ruleTarget(db: Db, id: string): AuditTarget {
  return {
    target: `rule:${id}`,
    state: () =>
      db.policyRule.findUnique({
        where: { id },
        select: {
          effect: true,
          pattern: true,
          conditions: true,
          versionHash: true,
          description: true,
          enabled: true,
        },
      }),
  };
}

function settingTarget(db: Db, key: string): AuditTarget {
  return {
    target: `setting:${key}`,
    state: () => db.setting.findUnique({ where: { key }, select: { value: true } }),
  };
}

function capabilityTarget(db: Db, name: string): AuditTarget {
  return {
    target: `capability:${name}`,
    state: () => db.capability.findUnique({ where: { name }, select: { category: true, active: true } }),
  };
}

/** Input keys whose values never go into the log. */
const SECRET_KEYS = new Set(["value", "password", "token", "secretValue", "key"]);

/** The input as recorded: values of secret-looking keys replaced, long strings cut. */
export function auditedInput(input: unknown): unknown {
  if (input === null || typeof input !== "object") return input;
  if (Array.isArray(input)) return input.slice(0, 50).map(auditedInput);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(input as Input)) {
    if (SECRET_KEYS.has(k) && typeof v === "string") out[k] = "(hidden)";
    else if (typeof v === "string" && v.length > 2000) out[k] = `${v.slice(0, 2000)}…`;
    else out[k] = auditedInput(v);
  }
  return out;
}

export function auditTargetFor(db: Db, path: string, input: unknown): AuditTarget | null {
  const make = TARGETS[path];
  if (!make || !input || typeof input !== "object") return null;
  return make(db, input as Input);
}

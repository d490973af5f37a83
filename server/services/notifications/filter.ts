/**
 * Which requests notify a user: all of them, none, or those matching a category, a capability
 * pattern (`notes.*`) or an API key. Roles decide who may answer; this only decides who is told.
 */
import { z } from "zod";
import { AppError } from "../../core/errors";

export const notificationFilterSchema = z.object({
  mode: z.enum(["all", "matching", "none"]),
  categories: z.array(z.enum(["read", "write", "execute", "external"])).default([]),
  /** Capability names; `module.*` matches every export of the module, `*` everything. */
  capabilities: z.array(z.string().trim().min(1).max(200)).max(50).default([]),
  /** API key ids whose requests notify. */
  keys: z.array(z.string().min(1).max(100)).max(50).default([]),
});
export type NotificationFilter = z.infer<typeof notificationFilterSchema>;

export const DEFAULT_FILTER: NotificationFilter = { mode: "all", categories: [], capabilities: [], keys: [] };

/** The stored filter, or the default (all) for a user who never chose. */
export function parseFilter(text: string | null | undefined): NotificationFilter {
  if (!text) return DEFAULT_FILTER;
  const parsed = notificationFilterSchema.safeParse(JSON.parse(text));
  return parsed.success ? parsed.data : DEFAULT_FILTER;
}

export function validateFilter(input: unknown): NotificationFilter {
  const parsed = notificationFilterSchema.safeParse(input);
  if (!parsed.success) {
    throw new AppError("BAD_INPUT", `notification filter is invalid: ${parsed.error.issues[0]?.message}`);
  }
  const f = parsed.data;
  if (f.mode === "matching" && !f.categories.length && !f.capabilities.length && !f.keys.length) {
    throw new AppError(
      "BAD_INPUT",
      'a "matching" filter needs at least one category, capability pattern or key; choose "all" or "none" otherwise',
    );
  }
  return f;
}

function capabilityMatches(pattern: string, name: string): boolean {
  if (pattern === "*") return true;
  if (pattern.endsWith(".*")) return name.startsWith(pattern.slice(0, -1));
  return pattern === name;
}

export interface FilterSubject {
  capability: string;
  category: string;
  apiKeyId: string | null;
}

export function filterMatches(filter: NotificationFilter, subject: FilterSubject): boolean {
  if (filter.mode === "all") return true;
  if (filter.mode === "none") return false;
  return (
    filter.categories.includes(subject.category as NotificationFilter["categories"][number]) ||
    filter.capabilities.some((p) => capabilityMatches(p, subject.capability)) ||
    (subject.apiKeyId !== null && filter.keys.includes(subject.apiKeyId))
  );
}

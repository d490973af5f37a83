/**
 * The one category-review flow for every source: what waits for an admin (a republished toolset's
 * new category, an MCP tool that is new or changed upstream, and whatever a later source
 * proposes), and an admin's accept at the version they saw. Each source plug-in keeps its own rows
 * and answers through its review part; the console's queue and the CLI read only this.
 */
import { z } from "zod";
import type { CapabilityRegistry } from "../core/capabilities/registry";
import { CATEGORIES } from "../core/capabilities/types";
import { AppError } from "../core/errors";
import type { Db } from "../db";
import { categoryReasonSchema } from "../services/capability-categories";
import type { ReviewItem, SourcePlugin } from "./plugin";

export const acceptReviewSchema = z.object({
  capability: z.string().trim().min(1).max(200),
  hash: z.string().trim().min(1).max(200),
  category: z.enum(CATEGORIES),
  reason: categoryReasonSchema,
});
export type AcceptReviewRequest = z.input<typeof acceptReviewSchema>;

/** Everything waiting for a category, from every source that reviews, by capability name. */
export async function listPendingReviews(db: Db, plugins: readonly SourcePlugin[]): Promise<ReviewItem[]> {
  const lists = await Promise.all(plugins.map((p) => (p.review ? p.review.pending(db) : [])));
  return lists.flat().sort((a, b) => a.capability.localeCompare(b.capability));
}

/**
 * Accepts (or sets) the category of one waiting capability at the version the admin saw. The
 * source that lists it decides; the registry of this instance reloads at once.
 */
export async function acceptReview(
  db: Db,
  plugins: readonly SourcePlugin[],
  userId: string | null,
  input: AcceptReviewRequest,
  registry?: Pick<CapabilityRegistry, "invalidate">,
): Promise<ReviewItem> {
  const parsed = acceptReviewSchema.safeParse(input);
  if (!parsed.success) throw new AppError("BAD_INPUT", parsed.error.issues.map((i) => i.message).join("; "));
  const request = parsed.data;
  for (const plugin of plugins) {
    if (!plugin.review) continue;
    const item = (await plugin.review.pending(db)).find((i) => i.capability === request.capability);
    if (!item) continue;
    await plugin.review.accept(db, userId, request);
    registry?.invalidate();
    return { ...item, current: request.category };
  }
  throw new AppError(
    "NOT_FOUND",
    `${request.capability} is not waiting for a category review; see the pending list (categories pending)`,
  );
}

"use client";
/**
 * The one category-review queue: every capability, from every source, whose category waits for an
 * admin (a republished toolset's new category, an MCP tool that is new or changed upstream). An
 * admin accepts the proposal or sets another category, at the version shown; a version that
 * changed since is refused and the list reloads.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { CATEGORIES, type Category } from "@/server/core/capabilities/types";
import { CategoryBadge } from "../../_components/category-badge";
import { DisclosureButton } from "../../_components/disclosure-button";
import { ErrorNote } from "../../_components/error-note";
import { TextField } from "../../_components/text-field";
import { type RouterOutputs, useTRPC } from "../../_lib/trpc";

type ReviewItem = RouterOutputs["capabilities"]["reviews"][number];

/** How many waiting capabilities show before "Show all": a server's first sync can add dozens. */
const FIRST = 5;

export function ReviewQueue({ canEdit }: { canEdit: boolean }) {
  const trpc = useTRPC();
  const reviews = useQuery(trpc.capabilities.reviews.queryOptions());
  const [all, setAll] = useState(false);
  const items = reviews.data ?? [];
  const shown = all ? items : items.slice(0, FIRST);
  if (reviews.isPending || (items.length === 0 && !reviews.error)) return null;
  return (
    <section className="card review-queue" aria-labelledby="reviews-h">
      <h2 id="reviews-h">Waiting for a category ({items.length})</h2>
      <p className="muted small">
        A capability here is not mounted at this version until an admin accepts a category; the gate keeps
        using the category shown as "now" until then.
      </p>
      <ErrorNote error={reviews.error} />
      <ul className="review-list">
        {shown.map((item) => (
          <ReviewRow key={`${item.capability}@${item.hash}`} item={item} canEdit={canEdit} />
        ))}
      </ul>
      {items.length > FIRST && (
        <DisclosureButton open={all} onToggle={() => setAll(!all)}>
          {all ? "Show fewer" : `Show all ${items.length}`}
        </DisclosureButton>
      )}
    </section>
  );
}

function ReviewRow({ item, canEdit }: { item: ReviewItem; canEdit: boolean }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const [category, setCategory] = useState<Category>(item.proposed ?? "execute");
  const [reason, setReason] = useState("");
  const accept = useMutation(
    trpc.capabilities.acceptReview.mutationOptions({
      onSettled: () =>
        Promise.all([
          qc.invalidateQueries({ queryKey: trpc.capabilities.reviews.queryKey() }),
          qc.invalidateQueries({ queryKey: trpc.capabilities.list.queryKey() }),
          qc.invalidateQueries({ queryKey: trpc.capabilities.history.queryKey() }),
        ]),
    }),
  );
  return (
    <li className="review-item" aria-label={item.capability}>
      <div className="review-head">
        <code>{item.capability}</code>
        <span className="muted small">{item.source}</span>
        <span className="small">
          now <CategoryBadge category={item.current} /> · proposed <CategoryBadge category={item.proposed} />
        </span>
        <span className="muted small" title={item.hash}>
          version {item.hash.slice(0, 12)}
        </span>
      </div>
      <p className="small">{item.reason}</p>
      {canEdit && (
        <form
          className="inline-form"
          onSubmit={(e) => {
            e.preventDefault();
            accept.mutate({ capability: item.capability, hash: item.hash, category, reason });
          }}
        >
          <label>
            <span className="visually-hidden">Category for {item.capability}</span>
            <select value={category} onChange={(e) => setCategory(e.target.value as Category)}>
              {CATEGORIES.map((c) => (
                <option key={c} value={c}>
                  {c}
                </option>
              ))}
            </select>
          </label>
          <TextField
            label={<span className="visually-hidden">Why</span>}
            className="grow"
            placeholder="Why (kept in the history)"
            value={reason}
            onChange={setReason}
          />
          <button
            className="btn btn-primary"
            type="submit"
            disabled={accept.isPending || reason.trim().length < 3}
          >
            {category === item.proposed ? "Accept" : "Set"} {category}
          </button>
        </form>
      )}
      <ErrorNote error={accept.error} />
    </li>
  );
}

"use client";
/**
 * The approvals queue's focus and keys: the card /approvals#<id> links to gets the focus, J/K
 * move between cards and A/S/D answer the selected one from anywhere on the page, and after an
 * answer the focus stays in the queue.
 */
import { type RefObject, useEffect, useRef, useState } from "react";
import type { Answer, useDecide } from "../_run/decision-buttons";

const KEYS: Record<string, Answer> = { a: "once", s: "session", d: "deny" };
const CARD = "[data-testid=approval-card]";

/** Keys typed into a field, or with a modifier, belong to the field or the browser, not the queue. */
export function isTyping(e: KeyboardEvent): boolean {
  if (e.ctrlKey || e.metaKey || e.altKey || e.defaultPrevented) return true;
  const t = e.target as HTMLElement | null;
  return !!t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));
}

/** The target of /approvals#<id>, highlighted once it is on the page. */
export function useHashTarget(): string | null {
  const [hash, setHash] = useState<string | null>(null);
  useEffect(() => {
    const read = () => setHash(decodeURIComponent(window.location.hash.slice(1)) || null);
    read();
    window.addEventListener("hashchange", read);
    return () => window.removeEventListener("hashchange", read);
  }, []);
  return hash;
}

/**
 * Scroll the linked card into view and give it focus, once it exists. The list re-renders as
 * live data arrives; if that drops the focus to the page body, put it back on the linked card.
 */
export function useFocusLinkedCard(target: string | null, pendingIds: string) {
  const focusedTarget = useRef<string | null>(null);
  useEffect(() => {
    if (!target || !pendingIds.includes(target)) return;
    const el = document.getElementById(target);
    if (!el || el.tabIndex < 0) return;
    const lost = document.activeElement === null || document.activeElement === document.body;
    if (focusedTarget.current === target && !lost) return;
    if (focusedTarget.current !== target) el.scrollIntoView({ block: "center" });
    el.focus({ preventScroll: true });
    focusedTarget.current = target;
  }, [target, pendingIds]);
}

/**
 * J/K (and the arrows on a focused card) select, A/S/D answer. `selectedIndex` is the card J/K
 * moved to, clamped to the list; the returned `answered` records a mouse answer's index too.
 */
export function useQueueKeys({
  list,
  pendingIds,
  count,
  canDecide,
  decide,
}: {
  list: RefObject<HTMLElement | null>;
  /** The pending ids joined: changes when a card leaves or arrives. */
  pendingIds: string;
  count: number;
  canDecide: boolean;
  decide: ReturnType<typeof useDecide>;
}) {
  const answeredIndex = useRef<number | null>(null);
  /** The card J/K moved to (or that has focus); A/S/D answer it. The first card until then. */
  const [selected, setSelected] = useState(0);
  const selectedIndex = Math.min(selected, Math.max(0, count - 1));

  // After a keyboard answer, keep the focus in the queue: the card that took the answered one's place.
  useEffect(() => {
    const index = answeredIndex.current;
    if (index === null || !pendingIds) return;
    const cards = list.current?.querySelectorAll<HTMLElement>(CARD);
    if (!cards || cards.length === 0) return;
    const next = Math.min(index, cards.length - 1);
    cards[next]?.focus();
    setSelected(next);
    answeredIndex.current = null;
  }, [pendingIds, list]);

  // J/K and A/S/D work from anywhere on the page, without focusing a card first.
  const keyState = useRef({ selectedIndex, canDecide, decide });
  keyState.current = { selectedIndex, canDecide, decide };
  useEffect(() => {
    function onKeyDown(e: KeyboardEvent) {
      if (isTyping(e)) return;
      const cards = [...(list.current?.querySelectorAll<HTMLElement>(CARD) ?? [])];
      if (cards.length === 0) return;
      const state = keyState.current;
      const focused = cards.findIndex((c) => c.contains(document.activeElement));
      const current = focused >= 0 ? focused : Math.min(state.selectedIndex, cards.length - 1);
      const key = e.key.toLowerCase();
      const arrow = focused >= 0 && (key === "arrowdown" || key === "arrowup");
      if (key === "j" || key === "k" || arrow) {
        e.preventDefault();
        const down = key === "j" || key === "arrowdown";
        // The first J on a fresh page lands on the first card rather than skipping it.
        const next =
          focused < 0 ? current : Math.max(0, Math.min(cards.length - 1, current + (down ? 1 : -1)));
        cards[next]?.focus();
        cards[next]?.scrollIntoView({ block: "nearest" });
        setSelected(next);
        return;
      }
      const answer = KEYS[key];
      const card = cards[current];
      if (!answer || !card || !state.canDecide || state.decide.isPending) return;
      if (Number(card.dataset.expiresAt) <= Date.now()) return;
      if (answer === "session" && card.dataset.sessionGrantable === "false") return;
      e.preventDefault();
      answeredIndex.current = current;
      state.decide.mutate({ approvalId: card.id, answer });
    }
    document.addEventListener("keydown", onKeyDown);
    return () => document.removeEventListener("keydown", onKeyDown);
  }, [list]);

  return {
    selectedIndex,
    select: setSelected,
    /** A card answered by its own buttons: the focus goes to the one that takes its place. */
    answered: (index: number) => {
      answeredIndex.current = index;
    },
  };
}

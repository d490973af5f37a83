import { CATEGORIES } from "@/server/core/capabilities/types";

const KNOWN = new Set<string>(CATEGORIES);

/** A capability category in its colour (read neutral, write amber, execute red, external violet). */
export function CategoryBadge({ category, title }: { category: string | null | undefined; title?: string }) {
  if (!category) return <span className="muted">—</span>;
  const known = KNOWN.has(category);
  return (
    <span className={known ? `cat cat-${category}` : "cat"} title={title}>
      {category}
    </span>
  );
}

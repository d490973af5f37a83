import Link from "next/link";
import { CategoryBadge } from "../../_components/category-badge";
import { RelativeTime } from "../../_components/relative-time";
import type { RouterOutputs } from "../../_lib/trpc";
import { InlineCode } from "./inline-code";
import { codeFileOf, LanguageBadge } from "./language-badge";

type ToolsetSummary = RouterOutputs["toolsets"]["list"][number];

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`;

/** One toolset in the list: a card linking to its page, with what needs an admin's attention. */
export function ToolsetCard({ toolset: t }: { toolset: ToolsetSummary }) {
  return (
    <Link href={`/toolsets/${t.name}`} className="card toolset-card">
      <span className="title">
        <strong>{t.name}</strong>
        <span className="pill">{t.version ? `v${t.version}` : "no version"}</span>
        <LanguageBadge language={t.language} />
      </span>
      <p>
        {t.description ? <InlineCode text={t.description} /> : `No description in ${codeFileOf(t.language)}.`}
      </p>
      <span className="row small">
        <span className="muted">{plural(t.bindingCount, "binding")}</span>
        {t.categories.map((c) => (
          <CategoryBadge key={c} category={c} />
        ))}
      </span>
      <span className="row small muted">
        updated <RelativeTime value={t.updatedAt} />
        {t.missingEnv.length > 0 && (
          <span className="pill" title="Declared variables without a value">
            not set: {t.missingEnv.join(", ")}
          </span>
        )}
        {t.pendingCategoryChanges > 0 && (
          <span className="pill pill-wait">
            {plural(t.pendingCategoryChanges, "category change")} to review
          </span>
        )}
      </span>
    </Link>
  );
}

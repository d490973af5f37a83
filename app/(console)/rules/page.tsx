import type { Metadata } from "next";
import { RULE_EFFECTS } from "@/server/core/gate/terms";
import { requireUser } from "../../_lib/session";
import { DefaultModeCard } from "./default-mode";
import { RulesAdmin } from "./rules-admin";
import { TestCall } from "./test-call";
import "../../_styles/admin-pages.css";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Rules and modes" };

export default async function RulesPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const user = await requireUser();
  const params = await searchParams;
  const one = (v: string | string[] | undefined) => (typeof v === "string" ? v.slice(0, 500) : undefined);
  const effect = RULE_EFFECTS.find((e) => e === one(params.effect));
  const pattern = one(params.pattern);
  const description = one(params.description);
  const prefill = pattern
    ? { pattern, ...(effect ? { effect } : {}), ...(description ? { description } : {}) }
    : undefined;
  const canEdit = user.role === "admin";
  return (
    <>
      <div className="page-head">
        <div>
          <h1>Rules and modes</h1>
          <p>
            A deny rule always wins, even in auto mode; an ask rule forces a prompt; an allow rule skips it.
            Otherwise the mode and the category decide.
          </p>
        </div>
      </div>
      <div className="split" style={{ marginBottom: 12 }}>
        <RulesAdmin canEdit={canEdit} {...(prefill ? { prefill } : {})} />
        <DefaultModeCard canEdit={canEdit} />
      </div>
      <TestCall />
    </>
  );
}

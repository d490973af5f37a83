import type { Metadata } from "next";
import { getDb } from "@/server/db";
import { getPlaygroundState } from "@/server/services/playground";
import { getDefaultMode } from "@/server/services/policy-rules";
import { requireUser } from "../../_lib/session";
import "../workbench.css";
import { DEFAULT_CODE } from "./examples";
import { Playground } from "./playground";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Playground" };

export default async function PlaygroundPage() {
  const user = await requireUser();
  const db = getDb();
  const saved = await getPlaygroundState(db, user.id);
  return (
    <Playground
      initialCode={saved?.code || DEFAULT_CODE}
      initialMode={saved?.mode ?? (await getDefaultMode(db))}
      canRun={user.role !== "viewer"}
    />
  );
}

import type { Metadata } from "next";
import { getDb } from "@/server/db";
import { getPlaygroundState } from "@/server/services/playground";
import { requireUser } from "../../_lib/session";
import "../workbench.css";
import { DEFAULT_CODE } from "./examples";
import { Playground } from "./playground";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Playground" };

export default async function PlaygroundPage() {
  const user = await requireUser();
  const saved = await getPlaygroundState(getDb(), user.id);
  return (
    <Playground
      initialCode={saved?.code || DEFAULT_CODE}
      initialMode={saved?.mode ?? "default"}
      canRun={user.role !== "viewer"}
    />
  );
}

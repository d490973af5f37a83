import type { ReactNode } from "react";
import { requireUser } from "../_lib/session";
import { Shell } from "./shell";

export const dynamic = "force-dynamic";

export default async function ConsoleLayout({ children }: { children: ReactNode }) {
  const user = await requireUser();
  return (
    <Shell user={{ username: user.username, displayName: user.displayName, role: user.role }}>
      {children}
    </Shell>
  );
}

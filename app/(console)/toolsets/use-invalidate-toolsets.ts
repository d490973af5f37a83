"use client";
import { useQueryClient } from "@tanstack/react-query";
import { useTRPC } from "../../_lib/trpc";

/** After a publish or sync: toolsets and the capabilities their bindings became both refetch. */
export function useInvalidateToolsets(): () => Promise<unknown> {
  const trpc = useTRPC();
  const qc = useQueryClient();
  return () =>
    Promise.all([
      qc.invalidateQueries({ queryKey: trpc.toolsets.pathKey() }),
      qc.invalidateQueries({ queryKey: trpc.capabilities.pathKey() }),
    ]);
}

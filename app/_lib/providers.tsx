"use client";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { createTRPCClient, httpBatchLink, splitLink } from "@trpc/client";
import { type ReactNode, useState } from "react";
import type { AppRouter } from "@/server/api/root";
import { liveLink } from "./live-link";
import { TRPCProvider } from "./trpc";

export function Providers({ children }: { children: ReactNode }) {
  const [queryClient] = useState(
    () =>
      new QueryClient({
        defaultOptions: {
          queries: {
            staleTime: 5_000,
            retry: (count, error) => {
              const code = (error as { data?: { code?: string } }).data?.code;
              return count < 2 && code !== "UNAUTHORIZED" && code !== "FORBIDDEN" && code !== "NOT_FOUND";
            },
          },
        },
      }),
  );
  const [trpcClient] = useState(() =>
    createTRPCClient<AppRouter>({
      links: [
        splitLink({
          condition: (op) => op.type === "subscription",
          true: liveLink(),
          false: httpBatchLink({ url: "/api/trpc", headers: { "x-toolstore-csrf": "1" } }),
        }),
      ],
    }),
  );
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        {children}
      </TRPCProvider>
    </QueryClientProvider>
  );
}

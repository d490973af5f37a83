"use client";
import { useMutation } from "@tanstack/react-query";
import Link from "next/link";
import { usePathname, useRouter } from "next/navigation";
import { type ReactNode, useEffect, useState } from "react";
import { useTRPC } from "../_lib/trpc";
import { ApprovalsBadge } from "./approvals-badge";
import { NAV } from "./nav";

const RANK = { viewer: 0, approver: 1, admin: 2 } as const;

interface ShellUser {
  username: string;
  displayName: string;
  role: "viewer" | "approver" | "admin";
}

export function Shell({ user, children }: { user: ShellUser; children: ReactNode }) {
  const pathname = usePathname();
  const router = useRouter();
  const trpc = useTRPC();
  const signOut = useMutation(
    trpc.auth.signOut.mutationOptions({
      onSuccess: () => {
        router.replace("/signin");
        router.refresh();
      },
    }),
  );
  const items = NAV.filter((item) => RANK[user.role] >= RANK[item.min]);
  return (
    <div className="shell">
      <header className="topbar">
        <Link href="/" className="brand">
          <span className="brand-mark" aria-hidden /> ToolStore
        </Link>
        <span className="spacer" />
        <ThemeToggle />
        <span className="muted" data-testid="whoami">
          {user.displayName} <span className="pill">{user.role}</span>
        </span>
        <button type="button" className="btn btn-sm" onClick={() => signOut.mutate()}>
          Sign out
        </button>
      </header>
      <nav className="sidebar" aria-label="Sections">
        {items.map((item) => {
          const active = item.href === "/" ? pathname === "/" : pathname.startsWith(item.href);
          return (
            <Link
              key={item.href}
              href={item.href}
              className="nav-link"
              aria-current={active ? "page" : undefined}
            >
              {item.label}
              {item.badge === "approvals" && <ApprovalsBadge />}
            </Link>
          );
        })}
      </nav>
      <main className="main" id="main">
        {children}
      </main>
    </div>
  );
}

function ThemeToggle() {
  const [theme, setTheme] = useState<string | null>(null);
  useEffect(() => setTheme(document.documentElement.dataset.theme ?? "light"), []);
  if (!theme) return null;
  const next = theme === "dark" ? "light" : "dark";
  return (
    <button
      type="button"
      className="btn btn-sm"
      aria-label={`Switch to ${next} theme`}
      onClick={() => {
        document.documentElement.dataset.theme = next;
        localStorage.setItem("toolstore-theme", next);
        setTheme(next);
      }}
    >
      {theme === "dark" ? "☀ Light" : "☾ Dark"}
    </button>
  );
}

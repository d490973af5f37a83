"use client";
import { useMutation } from "@tanstack/react-query";
import Link from "next/link";
import { usePathname } from "next/navigation";
import { type ReactNode, useEffect, useState } from "react";
import { type Role, roleAtLeast } from "@/server/services/roles";
import { useTRPC } from "../_lib/trpc";
import { ApprovalsBadge } from "./approvals-badge";
import { NAV } from "./nav";

interface ShellUser {
  username: string;
  displayName: string;
  role: Role;
}

export function Shell({ user, children }: { user: ShellUser; children: ReactNode }) {
  const pathname = usePathname();
  const trpc = useTRPC();
  const signOut = useMutation(
    trpc.auth.signOut.mutationOptions({
      // A full page load: the signed-out user's cached data and live socket go with the page.
      onSuccess: () => window.location.replace("/signin"),
    }),
  );
  const items = NAV.filter((item) => roleAtLeast(user.role, item.min));
  // Below 768 px the sidebar is a menu behind this button; it closes when a page is chosen.
  const [menuOpen, setMenuOpen] = useState(false);
  // biome-ignore lint/correctness/useExhaustiveDependencies: closing on every navigation is the point
  useEffect(() => setMenuOpen(false), [pathname]);
  return (
    <div className={`shell${menuOpen ? " menu-open" : ""}`}>
      <header className="topbar">
        <button
          type="button"
          className="btn menu-toggle"
          aria-expanded={menuOpen}
          aria-controls="sections"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          <span aria-hidden>{menuOpen ? "✕" : "☰"}</span> Menu
          <ApprovalsBadge mirror />
        </button>
        <Link href="/" className="brand">
          <span className="brand-mark" aria-hidden /> ToolStore
        </Link>
        <span className="spacer" />
        <ThemeToggle />
        <span className="muted whoami" data-testid="whoami">
          {user.displayName} <span className="pill">{user.role}</span>
        </span>
        <button type="button" className="btn btn-sm signout" onClick={() => signOut.mutate()}>
          Sign out
        </button>
      </header>
      <nav className="sidebar" id="sections" aria-label="Sections">
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
      <span aria-hidden>{theme === "dark" ? "☀" : "☾"}</span>
      <span className="theme-label">{theme === "dark" ? "Light" : "Dark"}</span>
    </button>
  );
}

/** The card the sign-in and setup pages sit in: the brand, a heading, then the page's form. */
import type { ReactNode } from "react";

export function AuthCard({ title, children }: { title: string; children: ReactNode }) {
  return (
    <main className="auth-wrap">
      <div className="card auth-card">
        <div className="brand" style={{ marginBottom: 16 }}>
          <span className="brand-mark" aria-hidden /> ToolStore
        </div>
        <h1>{title}</h1>
        {children}
      </div>
    </main>
  );
}

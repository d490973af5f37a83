"use client";

interface TrpcLikeError {
  message: string;
  data?: { appCode?: string; code?: string; zodIssues?: string[] } | null;
}

/** An error as the console shows it: its code first, then what to do. Never HTML from the server. */
export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  const e = error as TrpcLikeError;
  const code = e.data?.appCode ?? e.data?.code ?? "ERROR";
  const issues = e.data?.zodIssues;
  let message = e.message;
  if (issues?.length) message = issues.join("; ");
  return (
    <div className="error-box" role="alert">
      <code>{code}</code> {message}
    </div>
  );
}

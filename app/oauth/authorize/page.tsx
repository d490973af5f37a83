/**
 * The OAuth consent page: the signed-in user sees which client asks and where it will be sent,
 * picks the mode and modules of the grant (never more than the role allows) and allows or denies.
 * A plain form (no script needed); POST /oauth/consent checks everything again.
 */
import type { Metadata } from "next";
import { cookies, headers } from "next/headers";
import { redirect } from "next/navigation";
import { AuthCard } from "@/app/_components/auth-card";
import { getDb } from "@/server/db";
import { getEngine } from "@/server/engine";
import { siteOfHeaders } from "@/server/http/oauth";
import { hasUsers, SESSION_COOKIE, sessionUser } from "@/server/services/auth";
import { listModuleNames } from "@/server/services/capability-categories";
import { checkAuthorizationRequest, MAX_MODE_BY_ROLE, modesForRole } from "@/server/services/oauth/authorize";
import "../../_styles/admin-pages.css";
import "./consent.css";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Allow access" };

const MODE_HELP = {
  plan: "reads only; everything else is blocked",
  default: "reads run; write, execute and external ask you first",
  auto: "everything runs without asking (deny rules still apply)",
} as const;

type Search = Record<string, string | string[] | undefined>;

function toParams(search: Search): URLSearchParams {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(search)) {
    if (k === "consent_error") continue;
    for (const value of Array.isArray(v) ? v : v === undefined ? [] : [v]) params.append(k, value);
  }
  return params;
}

export default async function AuthorizePage({ searchParams }: { searchParams: Promise<Search> }) {
  const search = await searchParams;
  const params = toParams(search);
  const db = getDb();
  const user = await sessionUser(db, (await cookies()).get(SESSION_COOKIE)?.value);
  if (!user) {
    if (!(await hasUsers(db))) redirect("/setup");
    redirect(`/signin?next=${encodeURIComponent(`/oauth/authorize?${params}`)}`);
  }
  const site = siteOfHeaders(await headers());
  const check = await checkAuthorizationRequest(db, site, params);
  if (!check.ok && check.redirect) redirect(check.redirect);
  if (!check.ok) {
    return (
      <AuthCard title="This sign-in link does not work">
        <p className="error-box" role="alert">
          {check.message}
        </p>
        <p className="muted small">Start the connection again from your MCP client.</p>
      </AuthCard>
    );
  }
  const { client, redirectUri } = check.request;
  const modes = modesForRole(user.role);
  const modules = await listModuleNames(db, { started: getEngine });
  const problem = typeof search.consent_error === "string" ? search.consent_error : null;
  return (
    <AuthCard title={`Allow ${client.name} to use ToolStore?`}>
      <form method="post" action="/oauth/consent" className="consent">
        <input type="hidden" name="request" value={params.toString()} />
        <p className="small" style={{ margin: 0 }}>
          <strong>{client.name}</strong> will act as <strong>{user.username}</strong> through MCP, like an API
          key of yours. After you answer you go to <code className="consent-uri">{redirectUri}</code>
        </p>
        <p className="muted small" style={{ margin: 0 }}>
          {client.kind === "metadata_document" ? (
            <>
              Client ID document: <code className="consent-uri">{client.id}</code>
            </>
          ) : (
            <>Registered by the client itself; only allow it if you started this connection.</>
          )}
        </p>
        <fieldset className="box">
          <legend>Mode</legend>
          {modes.map((m) => (
            <label className="check" key={m}>
              <input
                type="radio"
                name="mode"
                value={m}
                defaultChecked={m === "default" || modes.length === 1}
              />
              <span>
                <strong>{m}</strong> <span className="muted small">{MODE_HELP[m]}</span>
              </span>
            </label>
          ))}
          {user.role !== "admin" && (
            <span className="field-hint">
              As {user.role} you can grant at most {MAX_MODE_BY_ROLE[user.role]}.
            </span>
          )}
        </fieldset>
        <fieldset className="box">
          <legend>Mounted modules</legend>
          <label className="check">
            <input type="radio" name="mount" value="all" defaultChecked />
            All modules, including ones published later
          </label>
          <label className="check">
            <input type="radio" name="mount" value="some" />
            Only these:
          </label>
          <fieldset className="checks consent-modules" aria-label="Modules to mount">
            {modules.map((m) => (
              <label key={m.name}>
                <input type="checkbox" name="module" value={m.name} />
                <code>{m.name}</code>
              </label>
            ))}
            {modules.length === 0 && <span className="muted small">No modules yet.</span>}
          </fieldset>
        </fieldset>
        {problem && (
          <p className="error-box" role="alert">
            {problem}
          </p>
        )}
        <div className="row consent-actions">
          <button className="btn btn-primary" type="submit" name="decision" value="allow">
            Allow
          </button>
          <button className="btn" type="submit" name="decision" value="deny">
            Deny
          </button>
        </div>
      </form>
    </AuthCard>
  );
}

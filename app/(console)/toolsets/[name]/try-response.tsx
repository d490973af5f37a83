"use client";
/**
 * The right half of Try it: the request as an agent would write it, then the response: the call
 * running (or waiting for a human's approval), the gate's decision, and the returned value.
 */
import Link from "next/link";
import { CopyButton } from "../../../_components/copy-button";
import { Countdown } from "../../../_components/countdown";
import { ErrorNote } from "../../../_components/error-note";
import { JsonView } from "../../../_components/json-view";
import type { RouterOutputs } from "../../../_lib/trpc";

type TryResult = RouterOutputs["toolsets"]["tryIt"];

/** The approval request this call waits on, when it does. */
export interface Waiting {
  approvalId: string;
  expiresAt: number;
}

function Running({ capability, waiting }: { capability: string; waiting: Waiting | null }) {
  return (
    <div className="decision" data-testid="try-waiting">
      <span className="spinner" aria-hidden />
      {waiting ? (
        <div>
          <div className="decision-reason">Waiting for approval</div>
          <div className="small muted">
            Approve or deny it in <Link href="/approvals">Approvals</Link>
            {" · "}
            <Countdown until={waiting.expiresAt} />
          </div>
        </div>
      ) : (
        <div className="decision-reason">Calling {capability}…</div>
      )}
    </div>
  );
}

function Outcome({ result }: { result: TryResult }) {
  return (
    <div className="stack" data-testid="try-result">
      <div className="decision">
        <span className={`effect effect-${result.decision ?? (result.ok ? "allow" : "deny")}`}>
          {result.decision ?? (result.ok ? "ok" : "error")}
        </span>
        <div>
          <div className="decision-reason">
            {result.ok ? "Returned" : <code>{result.error?.code}</code>}{" "}
            {result.ok ? `in ${result.ms} ms` : result.error?.message}
          </div>
          {result.reason && <div className="small muted">gate: {result.reason}</div>}
        </div>
      </div>
      {result.ok && (
        <div className="result-box">
          <JsonView value={result.value} label="Result" />
        </div>
      )}
    </div>
  );
}

export function TryResponse({
  capability,
  args,
  pending,
  waiting,
  result,
  error,
}: {
  capability: string;
  args: Record<string, unknown>;
  pending: boolean;
  waiting: Waiting | null;
  result: TryResult | undefined;
  error: unknown;
}) {
  return (
    <section className="card" aria-labelledby="try-result-h" aria-live="polite">
      <h2 id="try-result-h">Request and response</h2>
      <h3>Request</h3>
      <div className="snippet">
        <pre>{`${capability}(${JSON.stringify(args, null, 2)})`}</pre>
        <CopyButton text={JSON.stringify(args)} label="Copy args" />
      </div>
      <h3>Response</h3>
      <ErrorNote error={error} />
      {pending && <Running capability={capability} waiting={waiting} />}
      {!pending && !result && !error && (
        <p className="muted small">
          Fill in the arguments and press Run. The gate's decision and the result appear here.
        </p>
      )}
      {result && !pending && <Outcome result={result} />}
    </section>
  );
}

"use client";
/**
 * The top of a toolset's page: name, version, language, description and hash, and for an editor
 * the upload form and "Publish from folder" with what the last publish said.
 */
import { useMutation } from "@tanstack/react-query";
import Link from "next/link";
import { type ReactNode, useState } from "react";
import { BusyButton } from "../../../_components/busy-button";
import { CopyButton } from "../../../_components/copy-button";
import { DisclosureButton } from "../../../_components/disclosure-button";
import { type RouterOutputs, useTRPC } from "../../../_lib/trpc";
import { InlineCode } from "../inline-code";
import { LanguageBadge } from "../language-badge";
import { PublishError } from "../publish-errors";
import { UploadForm } from "../upload-form";
import { useInvalidateToolsets } from "../use-invalidate-toolsets";

type Toolset = RouterOutputs["toolsets"]["get"];

/** The heading block with the way back to the list; `children` go under the name. */
export function ToolsetTitle({
  name,
  toolset: t,
  actions,
  children,
}: {
  name: string;
  toolset?: Toolset;
  actions?: ReactNode;
  children?: ReactNode;
}) {
  return (
    <div className="page-head">
      <div>
        <p className="small">
          <Link href="/toolsets">← Toolsets</Link>
        </p>
        <h1>
          {name}{" "}
          {t?.version != null && (
            <span className="pill" style={{ verticalAlign: "middle" }}>
              v{t.version}
            </span>
          )}{" "}
          {t?.version != null && <LanguageBadge language={t.language} />}
        </h1>
        {children}
      </div>
      {actions}
    </div>
  );
}

function Description({ toolset: t }: { toolset?: Toolset }) {
  if (!t) return <p>Loading…</p>;
  if (t.description)
    return (
      <p>
        <InlineCode text={t.description} />
      </p>
    );
  return (
    <p>
      {t.language === "python"
        ? "No description in the module docstring of toolset.py."
        : "No description in the header comment of toolset.ts."}
    </p>
  );
}

export function ToolsetHead({
  name,
  toolset: t,
  canEdit,
}: {
  name: string;
  toolset?: Toolset;
  canEdit: boolean;
}) {
  const trpc = useTRPC();
  const invalidate = useInvalidateToolsets();
  const [uploading, setUploading] = useState(false);
  const [published, setPublished] = useState<string | null>(null);
  const republish = useMutation(
    trpc.toolsets.publishFolder.mutationOptions({
      onSuccess: (result) => {
        setPublished(result.message);
        void invalidate();
      },
    }),
  );
  const actions = canEdit && (
    <div className="row">
      <DisclosureButton open={uploading} onToggle={setUploading}>
        Upload new version…
      </DisclosureButton>
      {t?.hasFolder && (
        <BusyButton
          className="btn btn-primary"
          busy={republish.isPending}
          busyLabel="Publishing…"
          onClick={() => republish.mutate({ name })}
          title={`Publish toolsets/${name} again from the folder`}
        >
          Publish from folder
        </BusyButton>
      )}
    </div>
  );
  return (
    <>
      <ToolsetTitle name={name} toolset={t} actions={actions}>
        <Description toolset={t} />
        {t?.contentHash && (
          <p className="small row">
            <span>
              import from <code>toolstore/{name}</code> · hash{" "}
              <code title={t.contentHash}>{t.contentHash.slice(0, 12)}</code>
            </span>
            <CopyButton text={t.contentHash} label="Copy hash" />
          </p>
        )}
      </ToolsetTitle>
      {uploading && (
        <section className="card" style={{ marginBottom: 12 }} aria-labelledby="upload-h">
          <UploadForm
            fixedName={name}
            onDone={(result) => {
              setPublished(result.message);
              setUploading(false);
              void invalidate();
            }}
            onClose={() => setUploading(false)}
          />
        </section>
      )}
      <PublishError error={republish.error} />
      {published && (
        <div className="card small row" role="status" style={{ marginBottom: 12, alignItems: "flex-start" }}>
          <pre style={{ flex: 1 }}>{published}</pre>
          <button type="button" className="btn btn-sm" onClick={() => setPublished(null)}>
            Dismiss
          </button>
        </div>
      )}
    </>
  );
}

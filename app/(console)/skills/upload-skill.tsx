"use client";
import { useMutation } from "@tanstack/react-query";
import Link from "next/link";
import { type ChangeEvent, useState } from "react";
import { useTRPC } from "../../_lib/trpc";
import { PublishError } from "../toolsets/publish-errors";

function toBase64(buffer: ArrayBuffer): string {
  let binary = "";
  const bytes = new Uint8Array(buffer);
  for (let i = 0; i < bytes.length; i += 0x8000)
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** Upload a skill as a folder (the folder that holds SKILL.md) or as a zip. */
export function UploadSkill({ onDone, onClose }: { onDone: () => void; onClose: () => void }) {
  const trpc = useTRPC();
  const upload = useMutation(trpc.skills.upload.mutationOptions({ onSuccess: () => onDone() }));
  const [picked, setPicked] = useState<string | null>(null);

  async function pickFolder(e: ChangeEvent<HTMLInputElement>) {
    const list = [...(e.target.files ?? [])];
    if (list.length === 0) return;
    setPicked(`${list.length} file${list.length === 1 ? "" : "s"}`);
    const files = await Promise.all(
      list.map(async (f) => ({
        path: f.webkitRelativePath || f.name,
        base64: toBase64(await f.arrayBuffer()),
      })),
    );
    upload.mutate({ kind: "folder", files });
  }

  async function pickZip(e: ChangeEvent<HTMLInputElement>) {
    const file = e.target.files?.[0];
    if (!file) return;
    setPicked(file.name);
    const name = file.name.replace(/\.zip$/i, "");
    upload.mutate({ kind: "zip", base64: toBase64(await file.arrayBuffer()), name });
  }

  return (
    <div className="stack">
      <div className="row" style={{ justifyContent: "space-between" }}>
        <h2 id="upload-h" style={{ margin: 0 }}>
          Upload a skill
        </h2>
        <button type="button" className="btn btn-sm" onClick={onClose}>
          Close
        </button>
      </div>
      <p className="muted small">
        Pick the folder that holds <code>SKILL.md</code> (its name is the skill's name), or a zip of it. Each
        upload with new content is a new version.
      </p>
      <div className="skill-upload-inputs">
        <label>
          Skill folder
          <input type="file" aria-label="Skill folder" webkitdirectory="" multiple onChange={pickFolder} />
        </label>
        <label>
          Zip file
          <input type="file" aria-label="Zip file" accept=".zip,application/zip" onChange={pickZip} />
        </label>
      </div>
      {upload.isPending && (
        <p className="muted" role="status">
          <span className="spinner" aria-hidden /> Uploading {picked}…
        </p>
      )}
      <PublishError error={upload.error} />
      {upload.data && (
        <div className="card small" role="status">
          <strong>
            {upload.data.name} v{upload.data.version} {upload.data.status}
          </strong>{" "}
          <Link href={`/skills/${upload.data.name}`}>Open {upload.data.name}</Link>
          {upload.data.warnings.map((w) => (
            <div key={`${w.file}:${w.line}:${w.message}`} className="muted">
              <code>
                {w.file}
                {w.line ? `:${w.line}` : ""}
              </code>{" "}
              {w.message}
            </div>
          ))}
        </div>
      )}
    </div>
  );
}

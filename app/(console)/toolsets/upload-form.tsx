"use client";
import { useMutation } from "@tanstack/react-query";
import Link from "next/link";
import { type ChangeEvent, type FormEvent, useState } from "react";
import { useTRPC } from "../../_lib/trpc";
import { PublishError } from "./publish-errors";

/** Publish a toolset from its two files: pick them from disk or paste them. */
export function UploadForm({
  fixedName,
  onDone,
  onClose,
}: {
  fixedName?: string;
  onDone: (result: { name: string; message: string }) => void;
  onClose: () => void;
}) {
  const trpc = useTRPC();
  const upload = useMutation(trpc.toolsets.upload.mutationOptions({ onSuccess: (r) => onDone(r) }));
  const [name, setName] = useState(fixedName ?? "");
  const [doc, setDoc] = useState("");
  const [source, setSource] = useState("");
  const [language, setLanguage] = useState<"typescript" | "python">("typescript");
  const codeFile = language === "python" ? "toolset.py" : "toolset.ts";

  const readInto = (set: (text: string) => void) => async (e: ChangeEvent<HTMLInputElement>) => {
    const file = e.target.files?.[0];
    if (file) set(await file.text());
  };

  function submit(e: FormEvent) {
    e.preventDefault();
    upload.mutate({ name: name.trim(), doc, source, language });
  }

  return (
    <form className="stack" onSubmit={submit} onKeyDown={(e) => e.key === "Escape" && onClose()}>
      <div className="row" style={{ justifyContent: "space-between" }}>
        <h2 id="upload-h" style={{ margin: 0 }}>
          {fixedName ? `Upload a new version of ${fixedName}` : "Upload a toolset"}
        </h2>
        <button type="button" className="btn btn-sm" onClick={onClose}>
          Close
        </button>
      </div>
      {!fixedName && (
        <label>
          Name <span className="field-hint">the module name: agents import toolstore/&lt;name&gt;</span>
          <input
            value={name}
            onChange={(e) => setName(e.target.value)}
            placeholder="weather"
            pattern="[a-z][a-z0-9_\-]*"
            required
            autoFocus
            spellCheck={false}
          />
        </label>
      )}
      <div className="split-even">
        <div className="stack">
          <label>
            doc.md <span className="field-hint">choose the file or paste it below</span>
            <input type="file" accept=".md,text/markdown,text/plain" onChange={readInto(setDoc)} />
          </label>
          <textarea
            aria-label="doc.md text"
            rows={8}
            value={doc}
            onChange={(e) => setDoc(e.target.value)}
            placeholder="# weather&#10;&#10;What the agent should know…"
            required
          />
        </div>
        <div className="stack">
          <label>
            Language
            <select
              value={language}
              onChange={(e) => setLanguage(e.target.value === "python" ? "python" : "typescript")}
            >
              <option value="typescript">TypeScript (toolset.ts)</option>
              <option value="python">Python (toolset.py)</option>
            </select>
          </label>
          <label>
            {codeFile}{" "}
            <span className="field-hint">
              {language === "python" ? "functions decorated with @tool" : "functions marked @tool"} become
              bindings
            </span>
            <input
              type="file"
              accept=".ts,.py,text/plain,text/typescript,text/x-python"
              onChange={async (e) => {
                const file = e.target.files?.[0];
                if (!file) return;
                // The file's own name decides the language: toolset.py is Python.
                setLanguage(file.name.endsWith(".py") ? "python" : "typescript");
                setSource(await file.text());
              }}
            />
          </label>
          <textarea
            aria-label={`${codeFile} text`}
            rows={8}
            value={source}
            onChange={(e) => setSource(e.target.value)}
            placeholder={
              language === "python"
                ? 'from toolstore.toolset import tool\n\n@tool(category="read")\ndef hello(name: str): …'
                : "/** Say hello. @tool read */\nexport function hello(name: string) { … }"
            }
            required
          />
        </div>
      </div>
      <PublishError error={upload.error} />
      {upload.data && (
        <div className="card small" role="status">
          <pre>{upload.data.message}</pre>
          <Link href={`/toolsets/${upload.data.name}`}>Open {upload.data.name}</Link>
        </div>
      )}
      <div>
        <button type="submit" className="btn btn-primary" disabled={upload.isPending}>
          {upload.isPending ? "Publishing…" : "Validate and publish"}
        </button>
      </div>
    </form>
  );
}

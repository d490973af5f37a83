import { CopyButton } from "../../../_components/copy-button";

/** A toolset's source file with line numbers (the Code tab); the section is named by the file. */
export function ToolsetCode({ file, source }: { file: string; source: string }) {
  return (
    <section className="card" aria-label={file}>
      <div className="row" style={{ justifyContent: "space-between", marginBottom: 8 }}>
        <h2 style={{ margin: 0 }}>{file}</h2>
        <CopyButton text={source} label="Copy code" />
      </div>
      <pre className="code-view">
        {source.split("\n").map((line, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: lines of a fixed text
          <span key={i} className="code-line">
            <span className="line-no" aria-hidden>
              {i + 1}
            </span>
            {line}
            {"\n"}
          </span>
        ))}
      </pre>
    </section>
  );
}

/** The language of a toolset's code file, from the stored `language` column: "Python · toolset.py". */
export type ToolsetLanguage = "typescript" | "python";

export function codeFileOf(language: ToolsetLanguage): string {
  return language === "python" ? "toolset.py" : "toolset.ts";
}

export function LanguageBadge({ language }: { language: ToolsetLanguage }) {
  return (
    <span className="pill" title="Language of the toolset's code file" data-testid="language-badge">
      {language === "python" ? "Python" : "TypeScript"} · {codeFileOf(language)}
    </span>
  );
}

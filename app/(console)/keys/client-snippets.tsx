"use client";
/** What to paste into an MCP client to connect with a key: HTTP or stdio, as JSON or a command. */
import { useState } from "react";
import { CopyButton } from "../../_components/copy-button";
import { TabPanel, Tabs } from "../../_components/tabs";

const SNIPPETS = ["http", "claude", "stdio", "stdio-json"] as const;
type SnippetId = (typeof SNIPPETS)[number];
const SNIPPET_LABEL: Record<SnippetId, string> = {
  http: "HTTP (JSON config)",
  claude: "Claude Code",
  stdio: "stdio command",
  "stdio-json": "stdio (JSON config)",
};

export function snippetText(id: SnippetId, key: string, origin: string, projectDir: string): string {
  const url = `${origin}/api/mcp`;
  switch (id) {
    case "http":
      return JSON.stringify(
        { mcpServers: { toolstore: { type: "http", url, headers: { Authorization: `Bearer ${key}` } } } },
        null,
        2,
      );
    case "claude":
      return `claude mcp add --transport http toolstore ${url} \\\n  --header "Authorization: Bearer ${key}"`;
    case "stdio":
      return `cd ${shellQuote(projectDir)}\nTOOLSTORE_API_KEY=${key} npm run toolstore -- mcp`;
    case "stdio-json":
      return JSON.stringify(
        {
          mcpServers: {
            toolstore: {
              command: "npm",
              args: ["--prefix", projectDir, "run", "--silent", "toolstore", "--", "mcp"],
              env: { TOOLSTORE_API_KEY: key },
            },
          },
        },
        null,
        2,
      );
  }
}

function shellQuote(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, "'\\''")}'`;
}

export function Snippets({
  apiKey,
  origin,
  projectDir,
  compact,
}: {
  apiKey: string;
  origin: string;
  projectDir: string;
  compact?: boolean;
}) {
  const [tab, setTab] = useState<SnippetId>("http");
  const text = snippetText(tab, apiKey, origin || "http://127.0.0.1:3000", projectDir);
  return (
    <div>
      <Tabs
        label={compact ? "Snippets with the new key" : "Client snippets"}
        idPrefix={compact ? "fresh-snippet" : "snippet"}
        selected={tab}
        onSelect={setTab}
        tabs={SNIPPETS.map((id) => ({ id, label: SNIPPET_LABEL[id] }))}
      />
      <TabPanel className="snippet" idPrefix={compact ? "fresh-snippet" : "snippet"} selected={tab}>
        <pre data-testid={`snippet-${tab}`}>{text}</pre>
        <CopyButton text={text} />
      </TabPanel>
      {!compact && (
        <p className="field-hint" style={{ margin: 0 }}>
          {tab === "http" || tab === "claude"
            ? `Streamable HTTP at ${origin || "<origin>"}/api/mcp; every request carries Authorization: Bearer <key>.`
            : "The stdio server runs in the project folder and reads the key from TOOLSTORE_API_KEY."}
        </p>
      )}
    </div>
  );
}

"use client";
/** A toolset's page: its head, and tabs for overview, trying a binding, versions, settings and code. */
import { useQuery } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { ErrorNote } from "../../../_components/error-note";
import { TabPanel, Tabs } from "../../../_components/tabs";
import { type RouterOutputs, useTRPC } from "../../../_lib/trpc";
import { codeFileOf } from "../language-badge";
import type { Schema } from "./schema-form";
import { ToolsetCode } from "./toolset-code";
import { ToolsetHead, ToolsetTitle } from "./toolset-head";
import { ToolsetOverview } from "./toolset-overview";
import { ToolsetSettings } from "./toolset-settings";
import { TryIt } from "./try-it";
import { VersionsList } from "./versions-list";

type Toolset = RouterOutputs["toolsets"]["get"];

const TABS = [
  { id: "overview", label: "Overview" },
  { id: "try", label: "Try it" },
  { id: "versions", label: "Versions" },
  { id: "settings", label: "Settings" },
  { id: "code", label: "Code" },
] as const;
type TabId = (typeof TABS)[number]["id"];

/** The tab in the address (#versions), kept there so a reload or a shared link opens it again. */
function useTabFromHash(): [TabId, (id: TabId) => void] {
  const [tab, setTab] = useState<TabId>("overview");
  useEffect(() => {
    const fromHash = window.location.hash.slice(1);
    if (TABS.some((t) => t.id === fromHash)) setTab(fromHash as TabId);
  }, []);
  function choose(id: TabId) {
    setTab(id);
    window.history.replaceState(null, "", `#${id}`);
  }
  return [tab, choose];
}

export function ToolsetDetail({ name, canEdit, canRun, sessionId }: { name: string } & Viewer) {
  const trpc = useTRPC();
  const toolset = useQuery(trpc.toolsets.get.queryOptions({ name }));
  const [tab, choose] = useTabFromHash();
  const [tryBinding, setTryBinding] = useState<string | null>(null);

  if (toolset.error) {
    return (
      <>
        <ToolsetTitle name={name} />
        <ErrorNote error={toolset.error} />
      </>
    );
  }
  const t = toolset.data;
  return (
    <>
      <ToolsetHead name={name} toolset={t} canEdit={canEdit} />
      <Tabs
        label="Toolset sections"
        idPrefix="toolset"
        selected={tab}
        onSelect={choose}
        tabs={TABS.map((x) => ({
          id: x.id,
          label: `${x.label}${x.id === "versions" && t ? ` (${t.versions.length})` : ""}`,
        }))}
      />
      <TabPanel idPrefix="toolset" selected={tab}>
        {t ? (
          <ToolsetTab
            tab={tab}
            toolset={t}
            viewer={{ canEdit, canRun, sessionId }}
            tryBinding={tryBinding}
            onTry={(binding) => {
              setTryBinding(binding);
              choose("try");
            }}
          />
        ) : (
          <p className="muted">Loading {name}…</p>
        )}
      </TabPanel>
    </>
  );
}

/** Who is looking: what they may change and run, and their console session (for Try it). */
interface Viewer {
  canEdit: boolean;
  canRun: boolean;
  sessionId: string;
}

function ToolsetTab({
  tab,
  toolset: t,
  viewer,
  tryBinding,
  onTry,
}: {
  tab: TabId;
  toolset: Toolset;
  viewer: Viewer;
  tryBinding: string | null;
  onTry: (binding: string) => void;
}) {
  // An admin's category stands over the one the source declares.
  const categoryOf = new Map(t.capabilities.map((c) => [c.exportName, c]));
  switch (tab) {
    case "overview":
      return <ToolsetOverview toolset={t} categoryOf={categoryOf} onTry={onTry} />;
    case "try":
      return (
        <TryIt
          toolset={t.name}
          bindings={t.bindings.map((b) => ({
            name: b.name,
            description: b.description,
            signature: b.signature,
            category: categoryOf.get(b.name)?.category ?? b.category,
            inputSchema: b.inputSchema as Schema,
          }))}
          initial={tryBinding}
          canRun={viewer.canRun}
          sessionId={viewer.sessionId}
        />
      );
    case "versions":
      return <VersionsList name={t.name} versions={t.versions} current={t.version} />;
    case "settings":
      return (
        <ToolsetSettings
          name={t.name}
          timeoutMs={t.timeoutMs}
          allowedHosts={t.allowedHosts}
          declared={{ hosts: t.declarations.hosts, timeoutMs: t.declarations.timeoutMs ?? null }}
          env={t.env}
          canEdit={viewer.canEdit}
        />
      );
    case "code":
      return <ToolsetCode file={codeFileOf(t.language)} source={t.source} />;
  }
}

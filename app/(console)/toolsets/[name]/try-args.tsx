"use client";
/**
 * The arguments of a Try it call, edited as a form built from the binding's schema or as JSON.
 * The two stay in step: switching to JSON prints the form's value, and valid JSON rebuilds the form.
 */
import { TabPanel, Tabs } from "../../../_components/tabs";
import { type Schema, SchemaForm } from "./schema-form";

export type ArgsView = "form" | "json";

/** The arguments typed as JSON: one object, or why not. */
export function parseArgs(text: string): { args: Record<string, unknown> } | { error: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return { error: (error as Error).message };
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
    return { error: "the arguments are one JSON object" };
  }
  return { args: parsed as Record<string, unknown> };
}

export function TryArgs({
  toolset,
  binding,
  schema,
  view,
  onView,
  formKey,
  args,
  onArgs,
  jsonText,
  jsonError,
  onJson,
}: {
  toolset: string;
  binding: string;
  /** Null when no binding is picked: only the JSON box shows. */
  schema: Schema | null;
  view: ArgsView;
  onView: (view: ArgsView) => void;
  /** Changes when the form must start again from `args`. */
  formKey: number;
  args: Record<string, unknown>;
  onArgs: (args: Record<string, unknown>) => void;
  jsonText: string;
  jsonError: string | null;
  onJson: (text: string) => void;
}) {
  return (
    <>
      <Tabs
        label="Arguments editor"
        idPrefix={`try-${toolset}`}
        selected={view}
        onSelect={onView}
        style={{ marginBottom: 0 }}
        tabs={[
          { id: "form", label: "Form" },
          { id: "json", label: "JSON" },
        ]}
      />
      <TabPanel idPrefix={`try-${toolset}`} selected={view}>
        {schema && view === "form" ? (
          <SchemaForm
            key={`${binding}-${formKey}`}
            schema={schema}
            value={args}
            onChange={onArgs}
            idPrefix={`arg-${binding}`}
          />
        ) : (
          <label>
            Arguments (JSON)
            <textarea
              rows={10}
              value={jsonText}
              spellCheck={false}
              aria-invalid={jsonError !== null}
              onChange={(e) => onJson(e.target.value)}
            />
            {jsonError && (
              <span className="field-hint" style={{ color: "var(--danger)" }}>
                {jsonError}
              </span>
            )}
          </label>
        )}
      </TabPanel>
    </>
  );
}

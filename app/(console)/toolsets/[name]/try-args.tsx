"use client";
/**
 * The arguments of a Try it call, edited as a form built from the binding's schema or as JSON.
 * The two stay in step: switching to JSON prints the form's value, and valid JSON rebuilds the form.
 */
import { useState } from "react";
import { TabPanel, Tabs } from "../../../_components/tabs";
import { initialArgs, type Schema, SchemaForm } from "./schema-form";

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

/** The arguments and both editors' state, kept in step; `reset` starts over for another binding. */
export function useTryArgs(schema: Schema | null) {
  const [view, setView] = useState<ArgsView>("form");
  const [args, setArgs] = useState<Record<string, unknown>>(() => (schema ? initialArgs(schema) : {}));
  const [jsonText, setJsonText] = useState(() => JSON.stringify(args, null, 2));
  const [jsonError, setJsonError] = useState<string | null>(null);
  // A new key makes the form start again from `args`.
  const [formKey, setFormKey] = useState(0);
  return {
    view,
    args,
    setArgs,
    jsonText,
    jsonError,
    formKey,
    reset(next: Schema | null) {
      const fresh = next ? initialArgs(next) : {};
      setArgs(fresh);
      setJsonText(JSON.stringify(fresh, null, 2));
      setJsonError(null);
      setFormKey((k) => k + 1);
    },
    switchView(next: ArgsView) {
      if (next === view) return;
      if (next === "json") setJsonText(JSON.stringify(args, null, 2));
      else if (jsonError === null) setFormKey((k) => k + 1);
      setView(next);
    },
    editJson(text: string) {
      setJsonText(text);
      const parsed = parseArgs(text);
      if ("error" in parsed) {
        setJsonError(parsed.error);
        return;
      }
      setArgs(parsed.args);
      setJsonError(null);
    },
  };
}

export type TryArgsState = ReturnType<typeof useTryArgs>;

export function TryArgs({
  toolset,
  binding,
  schema,
  state,
}: {
  toolset: string;
  binding: string;
  /** Null when no binding is picked: only the JSON box shows. */
  schema: Schema | null;
  state: TryArgsState;
}) {
  const { view, formKey, args, jsonText, jsonError } = state;
  return (
    <>
      <Tabs
        label="Arguments editor"
        idPrefix={`try-${toolset}`}
        selected={view}
        onSelect={state.switchView}
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
            onChange={state.setArgs}
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
              onChange={(e) => state.editJson(e.target.value)}
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

"use client";
/**
 * One `toolstore/ui` call as the tab that started the run renders it, inline in the timeline: a
 * pane (markdown without HTML, a table, JSON, an image by asset id), a progress bar, or a
 * question with its choices, a form from its schema, or a text field, answered from here.
 */
import { type FormEvent, useState } from "react";
import { type Column, DataTable } from "@/app/_components/data-table";
import { JsonView } from "@/app/_components/json-view";
import { MarkdownView } from "@/app/_components/markdown-view";
import type { JsonObject, JsonSchema } from "@/server/core/capabilities/types";
import type { UiClient, UiPaneState } from "./use-ui-client";

type Row = Record<string, unknown>;

function ShowPane({ args }: { args: JsonObject }) {
  const table = Array.isArray(args.table) ? (args.table as Row[]) : null;
  const keys = table
    ? [...new Set(table.slice(0, 50).flatMap((r) => Object.keys(r ?? {})))].slice(0, 12)
    : [];
  const columns: Column<Row>[] = keys.map((k) => ({
    label: k,
    cell: (r) => {
      const v = r[k];
      return typeof v === "object" && v !== null ? JSON.stringify(v) : String(v ?? "");
    },
  }));
  const image = args.image as { asset_id?: string } | undefined;
  return (
    <div className="ui-show">
      {typeof args.title === "string" && <strong className="ui-title">{args.title}</strong>}
      {typeof args.markdown === "string" && <MarkdownView text={args.markdown} />}
      {table && (
        <DataTable
          label={typeof args.title === "string" ? args.title : "Table from the action"}
          columns={columns}
          rows={table.map((r, i) => ({ ...r, __i: i }))}
          rowKey={(r) => String(r.__i)}
          testId="ui-table"
        />
      )}
      {args.json !== undefined && <JsonView value={args.json} />}
      {image?.asset_id && (
        // biome-ignore lint/performance/noImgElement: bytes come from our own authenticated route
        <img className="ui-image" src={`/api/assets/${image.asset_id}`} alt="Shown by the action" />
      )}
    </div>
  );
}

/** The flat fields of an object schema a form can render; null when it needs the JSON editor. */
function formFields(
  schema: JsonSchema,
): [string, { type?: string; title?: string; enum?: unknown[] }][] | null {
  const props = schema.properties as Record<string, { type?: string; title?: string; enum?: unknown[] }>;
  if (!props || typeof props !== "object") return null;
  const entries = Object.entries(props);
  const flat = entries.every(([, p]) => ["string", "number", "integer", "boolean"].includes(String(p?.type)));
  return flat && entries.length > 0 ? entries : null;
}

function readForm(form: HTMLFormElement, fields: NonNullable<ReturnType<typeof formFields>>): Row {
  const data = new FormData(form);
  const out: Row = {};
  for (const [name, p] of fields) {
    const raw = data.get(name);
    if (p.type === "boolean") out[name] = raw === "on";
    else if (raw === null || raw === "") continue;
    else if (p.type === "number" || p.type === "integer") out[name] = Number(raw);
    else out[name] = String(raw);
  }
  return out;
}

function AskForm({ state, client }: { state: UiPaneState; client: UiClient }) {
  const { prompt } = state;
  const args = prompt.args;
  const [text, setText] = useState("");
  const choices = Array.isArray(args.choices) ? (args.choices as string[]) : null;
  const schema = args.schema as JsonSchema | undefined;
  const fields = schema ? formFields(schema) : null;
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    if (fields) client.answer(prompt.id, readForm(e.currentTarget, fields));
    else if (schema) {
      try {
        client.answer(prompt.id, JSON.parse(text));
      } catch {
        client.answer(prompt.id, text);
      }
    } else client.answer(prompt.id, text);
  };
  if (prompt.call === "confirm" || choices) {
    const options: [string, unknown][] = choices
      ? choices.map((c) => [c, c])
      : [
          ["Yes", true],
          ["No", false],
        ];
    return (
      <fieldset className="ui-choices" aria-label={String(args.question ?? args.message)}>
        {options.map(([label, value]) => (
          <button
            key={label}
            type="button"
            className="btn"
            disabled={client.answering}
            onClick={() => client.answer(prompt.id, value)}
          >
            {label}
          </button>
        ))}
      </fieldset>
    );
  }
  return (
    <form className="ui-form" onSubmit={submit}>
      {fields ? (
        fields.map(([name, p]) => (
          // biome-ignore lint/a11y/noLabelWithoutControl: the label wraps its control, one of three chosen below
          <label key={name} className={p.type === "boolean" ? "ui-check" : "ui-field"}>
            <span>{p.title ?? name}</span>
            {p.type === "boolean" ? (
              <input type="checkbox" name={name} />
            ) : Array.isArray(p.enum) ? (
              <select name={name}>
                {p.enum.map((v) => (
                  <option key={String(v)}>{String(v)}</option>
                ))}
              </select>
            ) : (
              <input
                name={name}
                type={p.type === "string" ? "text" : "number"}
                required={(schema?.required as string[] | undefined)?.includes(name)}
              />
            )}
          </label>
        ))
      ) : (
        <textarea
          aria-label="Your answer"
          rows={schema ? 4 : 2}
          value={text}
          placeholder={schema ? "An object as JSON" : "Your answer"}
          onChange={(e) => setText(e.target.value)}
        />
      )}
      <div className="row" style={{ gap: 8 }}>
        <button type="submit" className="btn btn-primary" disabled={client.answering}>
          Send answer
        </button>
      </div>
    </form>
  );
}

const OUTCOME_TEXT = {
  declined: "declined",
  expired: "nobody answered in time",
  withdrawn: "the run ended before an answer",
} as const;

export function UiPane({ state, client }: { state: UiPaneState; client: UiClient }) {
  const { prompt, outcome } = state;
  const args = prompt.args;
  const waiting = outcome === null;
  return (
    <div className={`ui-pane ui-${prompt.call}`} data-testid="ui-pane" data-call={prompt.call}>
      {prompt.call === "show" && <ShowPane args={args} />}
      {prompt.call === "progress" && (
        <div className="ui-progress">
          <span>{String(args.message)}</span>
          {typeof args.fraction === "number" && (
            <progress max={1} value={args.fraction} aria-label={String(args.message)} />
          )}
        </div>
      )}
      {(prompt.call === "ask" || prompt.call === "confirm") && (
        <>
          <p className="ui-question">{String(args.question ?? args.message)}</p>
          {waiting ? (
            <>
              <AskForm state={state} client={client} />
              <div className="row" style={{ gap: 8 }}>
                <button
                  type="button"
                  className="btn btn-sm"
                  disabled={client.answering}
                  onClick={() => client.decline(prompt.id)}
                >
                  Decline
                </button>
                {client.answerError && (
                  <span className="ui-error" role="alert">
                    {client.answerError.message}
                  </span>
                )}
              </div>
            </>
          ) : (
            <p className="muted" data-testid="ui-answer">
              {outcome === "answered" ? (
                <>
                  Answered: <code>{JSON.stringify(state.answer)}</code>
                </>
              ) : (
                OUTCOME_TEXT[outcome]
              )}
            </p>
          )}
        </>
      )}
    </div>
  );
}

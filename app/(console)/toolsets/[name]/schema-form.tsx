"use client";
/**
 * A form generated from a binding's JSON Schema: strings, numbers, booleans, enums, arrays and
 * objects get their own controls; anything else (unions, unknown) is edited as JSON. The value is
 * the arguments object itself; an optional field left empty is left out.
 */
import { type ReactNode, useId, useState } from "react";
import { RemoveButton } from "../../../_components/remove-button";
import { sampleValue } from "../../../_components/schema-sample";

export type Schema = { [key: string]: unknown };
type Value = unknown;

function typeOf(schema: Schema): string | undefined {
  const t = schema.type;
  if (Array.isArray(t)) {
    const nonNull = t.filter((x) => x !== "null");
    return nonNull.length === 1 ? (nonNull[0] as string) : undefined;
  }
  return typeof t === "string" ? t : undefined;
}

function hint(schema: Schema): string | undefined {
  return typeof schema.description === "string" ? schema.description : undefined;
}

/** Initial arguments: every default, and an empty value for required fields. */
export function initialArgs(schema: Schema): Record<string, Value> {
  const props = (schema.properties ?? {}) as Record<string, Schema>;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  const out: Record<string, Value> = {};
  for (const [name, prop] of Object.entries(props)) {
    if ("default" in prop) out[name] = prop.default;
    else if (required.has(name)) out[name] = sampleValue(prop);
  }
  return out;
}

export function SchemaForm({
  schema,
  value,
  onChange,
  idPrefix,
}: {
  schema: Schema;
  value: Record<string, Value>;
  onChange: (value: Record<string, Value>) => void;
  idPrefix: string;
}) {
  const props = (schema.properties ?? {}) as Record<string, Schema>;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  const names = Object.keys(props);
  if (names.length === 0) {
    return <p className="muted small">This binding takes no arguments.</p>;
  }
  return (
    <div className="stack">
      {names.map((name) => (
        <Field
          key={name}
          id={`${idPrefix}-${name}`}
          label={name}
          schema={props[name] as Schema}
          required={required.has(name)}
          value={value[name]}
          onChange={(next) => {
            const copy = { ...value };
            if (next === undefined) delete copy[name];
            else copy[name] = next;
            onChange(copy);
          }}
        />
      ))}
    </div>
  );
}

interface FieldProps {
  id: string;
  label: string;
  schema: Schema;
  required: boolean;
  value: Value;
  onChange: (value: Value) => void;
}

function Label({ label, schema, required }: { label: string; schema: Schema; required: boolean }) {
  const t = typeOf(schema) ?? (Array.isArray(schema.enum) ? "enum" : "JSON");
  return (
    <>
      <span>
        <code>{label}</code> <span className="hint">{t}</span>
        {required ? <span className="hint"> · required</span> : <span className="hint"> · optional</span>}
        {"default" in schema && <span className="hint"> · default {JSON.stringify(schema.default)}</span>}
      </span>
      {hint(schema) && <span className="hint">{hint(schema)}</span>}
    </>
  );
}

function Field(props: FieldProps) {
  const { schema } = props;
  const t = typeOf(schema);
  if (Array.isArray(schema.enum)) return <EnumField {...props} />;
  if (t === "string") return <TextField {...props} />;
  if (t === "number" || t === "integer") return <NumberField {...props} integer={t === "integer"} />;
  if (t === "boolean") return <BooleanField {...props} />;
  if (t === "array" && schema.items && typeof schema.items === "object") return <ArrayField {...props} />;
  if (t === "object" && schema.properties) return <ObjectField {...props} />;
  return <JsonField {...props} />;
}

function TextField({ id, label, schema, required, value, onChange }: FieldProps) {
  return (
    <label className="schema-field" htmlFor={id}>
      <Label label={label} schema={schema} required={required} />
      <input
        id={id}
        value={typeof value === "string" ? value : ""}
        onChange={(e) => onChange(e.target.value === "" && !required ? undefined : e.target.value)}
        spellCheck={false}
      />
    </label>
  );
}

function NumberField({
  id,
  label,
  schema,
  required,
  value,
  onChange,
  integer,
}: FieldProps & { integer: boolean }) {
  const [text, setText] = useState(typeof value === "number" ? String(value) : "");
  return (
    <label className="schema-field" htmlFor={id}>
      <Label label={label} schema={schema} required={required} />
      <input
        id={id}
        type="number"
        inputMode="decimal"
        step={integer ? 1 : "any"}
        value={text}
        onChange={(e) => {
          setText(e.target.value);
          const n = e.target.valueAsNumber;
          onChange(e.target.value === "" || Number.isNaN(n) ? (required ? null : undefined) : n);
        }}
      />
    </label>
  );
}

function BooleanField({ id, label, schema, required, value, onChange }: FieldProps) {
  if (required) {
    return (
      <label className="check" htmlFor={id}>
        <input
          id={id}
          type="checkbox"
          checked={value === true}
          onChange={(e) => onChange(e.target.checked)}
        />
        <code>{label}</code>
        {hint(schema) && <span className="field-hint">{hint(schema)}</span>}
      </label>
    );
  }
  return (
    <label className="schema-field" htmlFor={id}>
      <Label label={label} schema={schema} required={required} />
      <select
        id={id}
        value={value === undefined ? "" : String(value)}
        onChange={(e) => onChange(e.target.value === "" ? undefined : e.target.value === "true")}
      >
        <option value="">(leave out)</option>
        <option value="true">true</option>
        <option value="false">false</option>
      </select>
    </label>
  );
}

function EnumField({ id, label, schema, required, value, onChange }: FieldProps) {
  const options = schema.enum as Value[];
  const index = options.findIndex((o) => JSON.stringify(o) === JSON.stringify(value));
  return (
    <label className="schema-field" htmlFor={id}>
      <Label label={label} schema={schema} required={required} />
      <select
        id={id}
        value={index < 0 ? "" : String(index)}
        onChange={(e) => onChange(e.target.value === "" ? undefined : options[Number(e.target.value)])}
      >
        {(!required || index < 0) && <option value="">{required ? "Choose…" : "(leave out)"}</option>}
        {options.map((o, i) => (
          <option key={JSON.stringify(o)} value={String(i)}>
            {typeof o === "string" ? o : JSON.stringify(o)}
          </option>
        ))}
      </select>
    </label>
  );
}

/** A nested object or array: its fields boxed under its label. */
function FieldBox({
  label,
  schema,
  required,
  children,
}: {
  label: string;
  schema: Schema;
  required: boolean;
  children: ReactNode;
}) {
  return (
    <fieldset className="box">
      <legend>
        <Label label={label} schema={schema} required={required} />
      </legend>
      <div className="schema-nested">{children}</div>
    </fieldset>
  );
}

function ArrayField({ id, label, schema, required, value, onChange }: FieldProps) {
  const items = Array.isArray(value) ? value : [];
  const itemSchema = schema.items as Schema;
  const [keys, setKeys] = useState(() => items.map((_, i) => i));
  const [next, setNext] = useState(items.length);
  const set = (list: Value[], k: number[]) => {
    setKeys(k);
    onChange(list.length === 0 && !required ? undefined : list);
  };
  return (
    <FieldBox label={label} schema={schema} required={required}>
      {items.length === 0 && <span className="muted small">No items.</span>}
      {items.map((item, i) => (
        <div className="array-item" key={keys[i] ?? i}>
          <Field
            id={`${id}-${keys[i] ?? i}`}
            label={`${label}[${i}]`}
            schema={itemSchema}
            required
            value={item}
            onChange={(v) => {
              const copy = [...items];
              copy[i] = v;
              set(copy, keys);
            }}
          />
          <RemoveButton
            label={`Remove ${label}[${i}]`}
            onClick={() =>
              set(
                items.filter((_, j) => j !== i),
                keys.filter((_, j) => j !== i),
              )
            }
          />
        </div>
      ))}
      <div>
        <button
          type="button"
          className="btn btn-sm"
          onClick={() => {
            set([...items, sampleValue(itemSchema)], [...keys, next]);
            setNext(next + 1);
          }}
        >
          + Add to {label}
        </button>
      </div>
    </FieldBox>
  );
}

function ObjectField({ id, label, schema, required, value, onChange }: FieldProps) {
  const obj =
    value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, Value>) : {};
  return (
    <FieldBox label={label} schema={schema} required={required}>
      <SchemaForm
        schema={schema}
        value={obj}
        idPrefix={id}
        onChange={(v) => onChange(Object.keys(v).length === 0 && !required ? undefined : v)}
      />
    </FieldBox>
  );
}

function JsonField({ id, label, schema, required, value, onChange }: FieldProps) {
  const [text, setText] = useState(value === undefined ? "" : JSON.stringify(value, null, 1));
  const [bad, setBad] = useState<string | null>(null);
  const errorId = useId();
  return (
    <label className="schema-field" htmlFor={id}>
      <Label label={label} schema={schema} required={required} />
      <textarea
        id={id}
        rows={Math.min(8, Math.max(2, text.split("\n").length))}
        value={text}
        spellCheck={false}
        aria-invalid={bad !== null}
        aria-describedby={bad ? errorId : undefined}
        placeholder={'JSON, e.g. { "x": 3 }'}
        onChange={(e) => {
          setText(e.target.value);
          if (e.target.value.trim() === "") {
            setBad(null);
            onChange(required ? null : undefined);
            return;
          }
          try {
            onChange(JSON.parse(e.target.value));
            setBad(null);
          } catch (error) {
            setBad((error as Error).message);
          }
        }}
      />
      {bad && (
        <span className="hint" id={errorId} style={{ color: "var(--danger)" }}>
          Not JSON yet: {bad}
        </span>
      )}
    </label>
  );
}

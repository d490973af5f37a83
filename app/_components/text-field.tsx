/** A labelled text input with an optional hint after the label, controlled by a string. */
import type { CSSProperties, InputHTMLAttributes, ReactNode } from "react";

export function TextField({
  label,
  hint,
  value,
  onChange,
  className,
  style,
  ...input
}: {
  label: ReactNode;
  hint?: ReactNode;
  value: string;
  onChange: (value: string) => void;
  /** Classes and style of the label (`grow` in an inline form). */
  className?: string;
  style?: CSSProperties;
} & Omit<InputHTMLAttributes<HTMLInputElement>, "value" | "onChange" | "className" | "style">) {
  return (
    <label className={className} style={style}>
      {label}
      {hint !== undefined && (
        <>
          {" "}
          <span className="field-hint">{hint}</span>
        </>
      )}
      <input value={value} onChange={(e) => onChange(e.target.value)} {...input} />
    </label>
  );
}

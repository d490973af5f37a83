/** The mode picker of the console's forms: a labelled select over the server's MODES. */
import { MODES, type Mode } from "@/server/core/capabilities/types";

export function ModeSelect({ value, onChange }: { value: Mode; onChange: (mode: Mode) => void }) {
  return (
    <label>
      Mode
      <select value={value} onChange={(e) => onChange(e.target.value as Mode)}>
        {MODES.map((m) => (
          <option key={m} value={m}>
            {m}
          </option>
        ))}
      </select>
    </label>
  );
}

/**
 * Secret values of a toolset never leave the boundary: anything that goes back to an agent or a
 * log (results, errors, log lines) passes through `redactSecrets`; the console shows a mask.
 */
export const SECRET_MASK = "••••••••";
export const REDACTED = "[secret]";

/** Shorter values would redact ordinary text; the console refuses secrets below this length. */
export const MIN_SECRET_LENGTH = 4;

/** Replaces every occurrence of a secret value, raw or JSON-escaped, with `[secret]`. */
export function redactSecrets(text: string, secretValues: readonly string[]): string {
  let out = text;
  const values = secretValues
    .filter((v) => v.length >= MIN_SECRET_LENGTH)
    .flatMap((v) => [v, JSON.stringify(v).slice(1, -1), encodeURIComponent(v)])
    .sort((a, b) => b.length - a.length);
  for (const value of new Set(values)) {
    if (value.length >= MIN_SECRET_LENGTH) out = out.split(value).join(REDACTED);
  }
  return out;
}

/** Redacts secrets in every string (and key) of a JSON-like value; returns a copy. */
export function redactSecretsDeep<T>(value: T, secretValues: readonly string[]): T {
  if (secretValues.every((v) => v.length < MIN_SECRET_LENGTH)) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return redactSecrets(v, secretValues);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === "object") {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [redactSecrets(k, secretValues), walk(x)]));
    }
    return v;
  };
  return walk(value) as T;
}

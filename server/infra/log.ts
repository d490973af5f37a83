/**
 * The server's one logger. `TOOLSTORE_LOG_FORMAT=json` writes one JSON object per line (time,
 * level, msg, the active trace and span ids, the run id and other fields given); the default is
 * the plain lines a person reads in `npm start`. Both pass through the same redaction: the
 * password of a URL, bearer tokens, API keys, and every registered secret value in each of the
 * forms the sandbox's egress masks (server/core/sandbox/egress.ts).
 */
import { redactSecrets } from "../core/sandbox/egress";
import { telemetry } from "../core/telemetry";
import { loadEnv } from "../env";

export type LogLevel = "debug" | "info" | "warn" | "error";
export type LogFields = Readonly<Record<string, string | number | boolean | null | undefined>>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

export interface LoggerOptions {
  format?: "text" | "json";
  /** Where lines go; default stdout (debug, info) and stderr (warn, error). */
  write?: (line: string, level: LogLevel) => void;
  /** Component name, the `component` field of every line (e.g. "engine", "events"). */
  component?: string;
  now?: () => Date;
}

const KEY = Symbol.for("toolstore.logSecrets");
type Holder = typeof globalThis & { [KEY]?: Set<string> };

/** Secret values (decrypted for use) that no log line may show. */
function registered(): Set<string> {
  const holder = globalThis as Holder;
  holder[KEY] ??= new Set();
  return holder[KEY];
}

export function registerLogSecrets(values: Iterable<string>): void {
  const set = registered();
  for (const value of values) if (value.length >= 4) set.add(value);
}

/** The redaction every line passes, in both formats. */
export function redactLogText(text: string): string {
  const masked = text
    .replace(/(\/\/[^:/@\s]+:)[^@\s]*@/g, "$1***@")
    .replace(/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi, "$1 ***")
    .replace(/\btsk_[A-Za-z0-9_-]+/g, "tsk_***");
  const secrets = registered();
  return secrets.size ? redactSecrets(masked, [...secrets]) : masked;
}

function defaultFormat(): "text" | "json" {
  try {
    return loadEnv().TOOLSTORE_LOG_FORMAT === "json" ? "json" : "text";
  } catch {
    return "text";
  }
}

function defaultWrite(line: string, level: LogLevel): void {
  (level === "warn" || level === "error" ? process.stderr : process.stdout).write(`${line}\n`);
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const write = options.write ?? defaultWrite;
  const now = options.now ?? (() => new Date());
  const line = (level: LogLevel, message: string, fields: LogFields = {}) => {
    const format = options.format ?? defaultFormat();
    if (format === "text") {
      write(redactLogText(message), level);
      return;
    }
    const ids = telemetry().ids();
    const record: Record<string, unknown> = {
      time: now().toISOString(),
      level,
      msg: redactLogText(message),
      ...(options.component ? { component: options.component } : {}),
      ...(ids ? { trace_id: ids.traceId, span_id: ids.spanId } : {}),
    };
    for (const [key, value] of Object.entries(fields)) {
      if (value === undefined) continue;
      record[key] = typeof value === "string" ? redactLogText(value) : value;
    }
    write(JSON.stringify(record), level);
  };
  return {
    debug: (m, f) => line("debug", m, f),
    info: (m, f) => line("info", m, f),
    warn: (m, f) => line("warn", m, f),
    error: (m, f) => line("error", m, f),
  };
}

/** The process logger for a component. */
export function logger(component?: string): Logger {
  return createLogger(component ? { component } : {});
}

/**
 * The only place that reads process.env. Every variable is documented in README.md
 * ("Configuration"); a bad value fails with one line naming the variable and the fix.
 */
import { z } from "zod";
import { AppError } from "./core/errors";
import { parseHostAliases } from "./core/sandbox/host-fetch";

const csv = z
  .string()
  .optional()
  .transform((v) =>
    (v ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean),
  );

/** OTEL_TRACES_SAMPLER's values (the OpenTelemetry SDK configuration's names). */
export const TRACES_SAMPLERS = [
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
] as const;

const otlpProtocol = z
  .enum(["", "http/protobuf", "http/json", "grpc"], { message: "use http/protobuf or http/json" })
  .optional()
  .refine((v) => v !== "grpc", "grpc is not supported here; use http/protobuf (port 4318) or http/json");

const envSchema = z.object({
  DATABASE_URL: z.string().min(1).default("file:./.data/toolstore.db"),
  HOST: z.string().min(1).default("127.0.0.1"),
  PORT: z.coerce.number().int().min(1).max(65535).default(3000),
  /** Public base URL used in printed links (setup link, approval links in MCP progress). */
  TOOLSTORE_PUBLIC_URL: z.string().url().optional(),
  /** Folder of toolsets loaded at start. */
  TOOLSTORE_TOOLSETS_DIR: z.string().min(1).default("./toolsets"),
  /** Folder of skills (SKILL.md folders) loaded at start. */
  TOOLSTORE_SKILLS_DIR: z.string().min(1).default("./skills"),
  /** Extra origins allowed to send mutations and MCP requests (comma separated). */
  TOOLSTORE_ALLOWED_ORIGINS: csv,
  /** Extra Host names (`name` or `name:port`, comma separated) the console and MCP route answer to. */
  TOOLSTORE_ALLOWED_HOSTS: csv,
  /** Trust X-Forwarded-Host/-Proto (set only behind a reverse proxy that sets them). */
  TOOLSTORE_TRUST_PROXY: z
    .enum(["", "0", "1", "false", "true", "no", "yes"], { message: "use 1 or 0" })
    .optional()
    .transform((v) => v === "1" || v === "true" || v === "yes"),
  /**
   * Where toolsets' declared hosts are really sent, as `host=origin` pairs (comma separated), e.g.
   * `api.openweathermap.org=http://127.0.0.1:4100`: a mirror, a staging server or a local
   * stand-in. The allow-list and secrets still apply to the host the code names.
   */
  TOOLSTORE_EGRESS_ALIASES: z
    .string()
    .optional()
    .transform((text, ctx) => {
      try {
        return parseHostAliases(text);
      } catch (error) {
        ctx.addIssue({ code: "custom", message: (error as Error).message });
        return z.NEVER;
      }
    }),
  /** Hosts the built-in toolstore/http module may fetch (comma separated). */
  TOOLSTORE_HTTP_ALLOWED_HOSTS: csv,
  /** Choose the first-run setup token (automated installs, the e2e suite); random otherwise. */
  TOOLSTORE_SETUP_TOKEN: z.string().min(16, "use at least 16 characters").optional(),
  /** 32-byte key (base64 or hex) that encrypts stored secrets; default: a key file beside the database. */
  TOOLSTORE_SECRET_KEY: z.string().min(1).optional(),
  /** API key used by `npm run toolstore -- mcp` (stdio). */
  TOOLSTORE_API_KEY: z.string().optional(),
  /** Default wall-clock deadline of an action in ms. */
  TOOLSTORE_ACTION_TIMEOUT_MS: z.coerce.number().int().min(100).max(300_000).default(30_000),
  /** Minutes before a pending approval expires (up to 7 days: a parked action costs a row, not memory). */
  TOOLSTORE_APPROVAL_TTL_MINUTES: z.coerce
    .number()
    .min(0.05)
    .max(7 * 24 * 60)
    .default(5),
  /** Ms an action waiting for a human keeps its sandbox before it parks to the database. */
  TOOLSTORE_PARK_AFTER_MS: z.coerce.number().int().min(0).max(600_000).default(3_000),
  TOOLSTORE_MAX_HOT_WAITS: z.coerce.number().int().min(1).max(100_000).default(64),
  /** How often each server process writes its heartbeat; an instance that misses two is dead. */
  TOOLSTORE_HEARTBEAT_MS: z.coerce.number().int().min(50).max(60_000).default(2_000),
  /** Most seconds between an audit append and the signed checkpoint of the chain head that covers it. */
  TOOLSTORE_AUDIT_CHECKPOINT_SECONDS: z.coerce.number().min(0).max(3_600).default(5),
  /** Per-key MCP rate limit (requests per minute). */
  TOOLSTORE_MCP_RATE_LIMIT: z.coerce.number().int().min(1).default(600),
  /**
   * MCP requests this process runs at once (server/http/admission.ts); more wait their turn, per
   * client. Default: 4 per CPU, at least 8. 0: no limit.
   */
  TOOLSTORE_MCP_CONCURRENCY: z.coerce.number().int().min(0).max(100_000).optional(),
  /** Sandbox worker threads kept warm (the compute the pool plans on). Default: the CPU count. */
  TOOLSTORE_SANDBOX_WORKERS: z.coerce.number().int().min(1).max(256).optional(),
  /** Actions of one API key (or user) running at once, not counting approval waits. */
  TOOLSTORE_SANDBOX_RUNS_PER_KEY: z.coerce.number().int().min(1).max(100_000).default(64),
  /** An action that waited this long for a sandbox fails with a clear timeout. */
  TOOLSTORE_SANDBOX_QUEUE_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  /** SMTP server for email notifications, e.g. `smtps://user:pass@smtp.example.com`; unset: no email. */
  TOOLSTORE_SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\//, "use smtp://host:port or smtps://user:pass@host")
    .optional(),
  /** The From address of notification emails. */
  TOOLSTORE_SMTP_FROM: z.string().min(3).default("ToolStore <toolstore@localhost>"),
  /** `off` stops this instance from sending notifications (another instance still sends them). */
  TOOLSTORE_NOTIFICATIONS: z.enum(["on", "off"], { message: "use on or off" }).default("on"),
  /**
   * `/metrics`: `local` (loopback clients only), `off`, or a bearer token (16+ characters) that
   * scrapers send as `Authorization: Bearer <token>`.
   */
  TOOLSTORE_METRICS: z
    .string()
    .optional()
    .transform((v, ctx) => {
      const value = (v ?? "").trim() || "local";
      if (value === "local" || value === "off") return { access: value } as const;
      if (value.length < 16 || /\s/.test(value)) {
        ctx.addIssue({ code: "custom", message: "use local, off, or a token of at least 16 characters" });
        return z.NEVER;
      }
      return { access: "token", token: value } as const;
    }),
  /** Log lines as text for people (default) or one JSON object per line (`json`). */
  TOOLSTORE_LOG_FORMAT: z.enum(["", "text", "json"], { message: "use text or json" }).optional(),
  /** Traces are sent when one of these is set (the standard OpenTelemetry variables). */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().url().optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.string().url().optional(),
  OTEL_EXPORTER_OTLP_PROTOCOL: otlpProtocol,
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: otlpProtocol,
  OTEL_SDK_DISABLED: z
    .enum(["", "true", "false"], { message: "use true or false" })
    .optional()
    .transform((v) => v === "true"),
  OTEL_TRACES_EXPORTER: z.enum(["", "otlp", "none"], { message: "use otlp or none" }).optional(),
  OTEL_TRACES_SAMPLER: z
    .enum(["", ...TRACES_SAMPLERS], { message: `use one of ${TRACES_SAMPLERS.join(", ")}` })
    .optional(),
  OTEL_TRACES_SAMPLER_ARG: z.coerce.number().min(0).max(1).optional(),
  OTEL_SERVICE_NAME: z.string().min(1).optional(),
  NODE_ENV: z.enum(["development", "production", "test"]).default("production"),
});

export type Env = z.infer<typeof envSchema>;

let cached: Env | undefined;

export function loadEnv(source: NodeJS.ProcessEnv = process.env): Env {
  if (cached && source === process.env) return cached;
  const parsed = envSchema.safeParse(source);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const name = issue?.path.join(".") ?? "environment";
    throw new AppError(
      "CONFIG_INVALID",
      `${name} is invalid: ${issue?.message}; fix it or unset it (see README "Configuration")`,
    );
  }
  if (source === process.env) cached = parsed.data;
  return parsed.data;
}

export function publicUrl(env: Env = loadEnv()): string {
  return (
    env.TOOLSTORE_PUBLIC_URL ?? `http://${env.HOST.includes(":") ? `[${env.HOST}]` : env.HOST}:${env.PORT}`
  ).replace(/\/$/, "");
}

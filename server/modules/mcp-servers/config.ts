/**
 * The shape of a server's configuration (console form, CLI flags, imported `mcpServers` JSON)
 * and its validation. A name is the module name, so it follows the toolset naming rule.
 */
import { z } from "zod";
import { AppError } from "../../core/errors";
import { RESERVED_MODULE_NAMES, TOOLSET_NAME_PATTERN } from "../../core/toolsets/names";

export const MCP_TRANSPORTS = ["stdio", "http"] as const;
export type McpTransport = (typeof MCP_TRANSPORTS)[number];

export const DEFAULT_CALL_TIMEOUT_MS = 60_000;

const record = z.record(z.string().min(1).max(200), z.string().max(10_000));

export const mcpServerInput = z
  .object({
    name: z
      .string()
      .regex(TOOLSET_NAME_PATTERN, "lower case letters, digits, - and _, starting with a letter")
      .refine((n) => !RESERVED_MODULE_NAMES.includes(n), "is a built-in module's name"),
    transport: z.enum(MCP_TRANSPORTS),
    command: z.string().trim().min(1).max(1000).optional(),
    args: z.array(z.string().max(10_000)).max(200).default([]),
    env: record.default({}),
    url: z.string().url().optional(),
    headers: record.default({}),
    callTimeoutMs: z.number().int().min(100).max(3_600_000).default(DEFAULT_CALL_TIMEOUT_MS),
    enabled: z.boolean().default(true),
    /** Secret values by name (write only); `{{secret:NAME}}` in env or headers names them. */
    secrets: record.default({}),
  })
  .superRefine((v, ctx) => {
    if (v.transport === "stdio" && !v.command)
      ctx.addIssue({ code: "custom", path: ["command"], message: "a stdio server needs a command" });
    if (v.transport === "http" && !v.url)
      ctx.addIssue({ code: "custom", path: ["url"], message: "an HTTP server needs a url" });
    if (v.url && !/^https?:\/\//.test(v.url))
      ctx.addIssue({ code: "custom", path: ["url"], message: "must be an http:// or https:// URL" });
  });

export type McpServerInput = z.input<typeof mcpServerInput>;
export type McpServerConfig = z.output<typeof mcpServerInput>;

/** Validates a server's configuration; throws BAD_INPUT naming the field. */
export function parseServerInput(input: unknown): McpServerConfig {
  const parsed = mcpServerInput.safeParse(input);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue?.path.length ? issue.path.join(".") : "server";
  const name = (input as { name?: unknown } | null)?.name;
  throw new AppError(
    "BAD_INPUT",
    `${typeof name === "string" ? `server "${name}": ` : ""}${where}: ${issue?.message ?? "invalid"}`,
  );
}

const importedServer = z
  .object({
    command: z.string().optional(),
    args: z.array(z.string()).optional(),
    env: z.record(z.string(), z.string()).optional(),
    url: z.string().optional(),
    headers: z.record(z.string(), z.string()).optional(),
    type: z.string().optional(),
    disabled: z.boolean().optional(),
  })
  .passthrough();

/**
 * The standard client config `{ "mcpServers": { name: { command, args, env } | { url, headers } } }`
 * (Claude Desktop, Cursor, Claude Code) as server configurations. Throws BAD_INPUT with the
 * server's name for the first unusable entry.
 */
export function parseMcpServersJson(text: string): McpServerConfig[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new AppError("BAD_INPUT", `not JSON: ${(error as Error).message}`);
  }
  const servers = (json as { mcpServers?: unknown } | null)?.mcpServers;
  if (!servers || typeof servers !== "object" || Array.isArray(servers)) {
    throw new AppError("BAD_INPUT", 'expected an object { "mcpServers": { "<name>": { ... } } }');
  }
  return Object.entries(servers as Record<string, unknown>).map(([name, raw]) => {
    const entry = importedServer.safeParse(raw);
    if (!entry.success) {
      throw new AppError("BAD_INPUT", `server "${name}": ${entry.error.issues[0]?.message ?? "invalid"}`);
    }
    const e = entry.data;
    const transport: McpTransport = e.url ? "http" : "stdio";
    if (e.type && !["stdio", "http", "streamable-http", "streamableHttp"].includes(e.type)) {
      throw new AppError(
        "BAD_INPUT",
        `server "${name}": transport type "${e.type}" is not supported (stdio or Streamable HTTP)`,
      );
    }
    return parseServerInput({
      name,
      transport,
      ...(e.command ? { command: e.command } : {}),
      args: e.args ?? [],
      env: e.env ?? {},
      ...(e.url ? { url: e.url } : {}),
      headers: e.headers ?? {},
      enabled: e.disabled !== true,
    });
  });
}

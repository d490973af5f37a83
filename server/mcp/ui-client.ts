/**
 * The MCP client of an execute_code request as the run's `toolstore/ui` client: `ask` and
 * `confirm` become form elicitation (elicitation/create on the request's own stream, through the
 * SDK's elicitInput), `progress` an MCP progress notification. A client that declared no form
 * elicitation, or sent no progress token, does not render that call, and the call says so.
 * `show` has no MCP counterpart: panes are the console's.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { type ElicitRequestFormParams, ElicitResultSchema } from "@modelcontextprotocol/sdk/types.js";
import type {
  ClientToolRouter,
  JsonObject,
  JsonSchema,
  JsonValue,
  RendererInfo,
  UiCall,
} from "../core/capabilities/types";
import { checkAnswer, clientDeclined, clientRequired, clientTimeout } from "../core/capabilities/ui-calls";
import { AppError } from "../core/errors";
import { elicitationModes } from "./approval-prompts";
import type { ExecuteExtra } from "./execute-tool";
import type { ProgressReporter } from "./progress";

const PRIMITIVE = new Set(["string", "number", "integer", "boolean"]);
/** The request timeout error of the SDK (ErrorCode.RequestTimeout). */
const REQUEST_TIMEOUT = -32001;

type Requested = { type: "object"; properties: Record<string, JsonSchema>; required?: string[] };

/** The form the client shows for a question, and how its content becomes the answer. */
function formOf(
  call: UiCall,
  args: JsonObject,
): { schema: Requested; pick: (c: JsonObject) => unknown } | null {
  if (call === "confirm") {
    return {
      schema: {
        type: "object",
        properties: { confirm: { type: "boolean", title: "Confirm" } },
        required: ["confirm"],
      },
      pick: (c) => c.confirm === true,
    };
  }
  if (Array.isArray(args.choices)) {
    return {
      schema: {
        type: "object",
        properties: { answer: { type: "string", title: "Answer", enum: args.choices } },
        required: ["answer"],
      },
      pick: (c) => c.answer,
    };
  }
  const schema = args.schema as JsonSchema | undefined;
  if (schema) {
    const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
    // Form elicitation renders flat objects of primitives only (the protocol's restriction).
    const flat = Object.values(properties).every((p) => PRIMITIVE.has(String(p?.type)));
    if (!flat || Object.keys(properties).length === 0) return null;
    const required = Array.isArray(schema.required) ? (schema.required as string[]) : undefined;
    return { schema: { type: "object", properties, ...(required ? { required } : {}) }, pick: (c) => c };
  }
  return {
    schema: {
      type: "object",
      properties: { answer: { type: "string", title: "Answer" } },
      required: ["answer"],
    },
    pick: (c) => c.answer,
  };
}

export function createMcpUiClient(options: {
  server: McpServer;
  extra: ExecuteExtra;
  progress: ProgressReporter;
  sessionId: string;
  /** Called as a prompt goes to the client: the request now waits for a person, not the CPU. */
  onWait?: () => void;
}): ClientToolRouter {
  const { server, extra, progress } = options;
  const declared = () => server.server.getClientCapabilities()?.elicitation;
  const info = (): RendererInfo => {
    const version = server.server.getClientVersion();
    const renders: UiCall[] = [];
    if (elicitationModes(declared()).form) renders.push("ask", "confirm");
    if (progress.enabled) renders.push("progress");
    return {
      id: `mcp:${options.sessionId || String(extra.requestId)}`,
      kind: "mcp",
      label: version ? `MCP client "${version.name}" ${version.version}` : "MCP client",
      renders,
    };
  };

  async function elicit(message: string, schema: Requested, timeoutMs: number, signal: AbortSignal) {
    // The shapes formOf builds are the protocol's flat primitive schemas.
    const params = { mode: "form", message, requestedSchema: schema } as unknown as ElicitRequestFormParams;
    const requestOptions = { signal, timeout: timeoutMs };
    // A client that declared `elicitation: {}` (form mode, before modes existed) is asked directly:
    // elicitInput wants the `form` key.
    if ((declared() as { form?: unknown } | undefined)?.form !== undefined) {
      return server.server.elicitInput(params, { ...requestOptions, relatedRequestId: extra.requestId });
    }
    return extra.sendRequest({ method: "elicitation/create", params }, ElicitResultSchema, requestOptions);
  }

  return {
    renderers: () => [info()],
    async execute(call, args, { capability, timeoutMs, signal }) {
      const me = info();
      if (!me.renders.includes(call)) throw clientRequired(capability, call, [me]);
      if (call === "progress") {
        const pct = typeof args.fraction === "number" ? ` (${Math.round(args.fraction * 100)}%)` : "";
        progress.notify(`${String(args.message)}${pct}`);
        return { reported: true };
      }
      const form = formOf(call, args);
      if (!form) {
        const reason = `${capability}: ${me.label} renders only flat forms (string, number, integer, boolean fields); ask for a flat object`;
        throw new AppError("CLIENT_REQUIRED", reason, {
          details: { error: "client_required", capability, reason },
        });
      }
      const message = String(args.question ?? args.message);
      let result: { action: string; content?: Record<string, unknown> | undefined };
      options.onWait?.();
      try {
        result = await elicit(message, form.schema, timeoutMs, signal);
      } catch (error) {
        if (signal.aborted) throw new AppError("CONFLICT", "the run has ended");
        if ((error as { code?: unknown }).code === REQUEST_TIMEOUT)
          throw clientTimeout(capability, timeoutMs);
        throw new AppError(
          "INTERNAL",
          `${capability}: the MCP client failed to answer: ${(error as Error).message}`,
        );
      }
      if (result.action === "decline" && call === "confirm") return false;
      if (result.action !== "accept") throw clientDeclined(capability, me.label);
      return checkAnswer(call, args, form.pick((result.content ?? {}) as JsonObject)) as JsonValue;
    },
  };
}

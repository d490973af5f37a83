/**
 * `toolstore/store`: the agent's way to discover and call toolsets without importing them, with
 * the semantics of the old `tool_store` tool. `execute` goes through run.invoke, so the target
 * binding is gated exactly as if it had been imported; `execute` itself is `read` because it does
 * nothing but delegate (a second prompt for the wrapper would mean nothing to the approver).
 */
import { AppError } from "../../errors";
import { didYouMean } from "../did-you-mean";
import type { ToolsetCatalog } from "../ports";
import type { CapabilityModule, JsonObject } from "../types";

const STORE_MODULE_VERSION = "builtin-store-1";

export function createStoreModule(catalog: ToolsetCatalog): CapabilityModule {
  return {
    name: "store",
    description: "Discover toolsets and call them by name: list, search, info (with full docs), execute.",
    source: "builtin",
    versionHash: STORE_MODULE_VERSION,
    exports: [
      {
        spec: {
          name: "store.list",
          description: "List the toolsets and modules available to this session, with their functions.",
          category: "read",
          inputSchema: { type: "object", properties: {}, additionalProperties: false },
        },
        impl: async (run) => ({ tools: await catalog.list(run.session) }),
      },
      {
        spec: {
          name: "store.search",
          description: "Search toolsets by words in their names, descriptions and docs.",
          category: "read",
          inputSchema: {
            type: "object",
            properties: {
              query: { type: "string", description: "Words to look for" },
              limit: { type: "integer", minimum: 1, maximum: 50, default: 10 },
            },
            required: ["query"],
            additionalProperties: false,
          },
        },
        impl: async (run, args) => ({
          tools: await catalog.search(run.session, String(args.query), Number(args.limit ?? 10)),
        }),
      },
      {
        spec: {
          name: "store.info",
          description:
            "The definition of one toolset: its functions, input schemas, categories, and full documentation.",
          category: "read",
          inputSchema: {
            type: "object",
            properties: { tool_name: { type: "string", description: "Toolset name, e.g. weather" } },
            required: ["tool_name"],
            additionalProperties: false,
          },
        },
        impl: async (run, args) => {
          const name = String(args.tool_name);
          const info = await catalog.info(run.session, name);
          if (!info) throw await unknownTool(catalog, run.session, name);
          return info;
        },
      },
      {
        spec: {
          name: "store.execute",
          description:
            "Call a toolset function by name: { tool_name, arguments: { function?, ...args } }. `function` may be left out when the toolset has one function. Gated like an import.",
          category: "read",
          inputSchema: {
            type: "object",
            properties: {
              tool_name: { type: "string" },
              arguments: {
                type: "object",
                properties: { function: { type: "string" } },
                additionalProperties: true,
              },
            },
            required: ["tool_name"],
            additionalProperties: false,
          },
          userMessage: (args) => `execute ${String(args.tool_name)}`,
        },
        impl: async (run, args) => {
          const toolName = String(args.tool_name);
          const { function: fn, ...rest } = (args.arguments ?? {}) as JsonObject;
          const info = await catalog.info(run.session, toolName);
          if (!info) throw await unknownTool(catalog, run.session, toolName);
          let target = typeof fn === "string" ? fn : undefined;
          if (target === undefined) {
            const only = info.functions.length === 1 ? info.functions[0] : undefined;
            if (!only) {
              throw new AppError(
                "BAD_INPUT",
                `${toolName} has ${info.functions.length} functions; name one in arguments.function: ${info.functions.map((f) => f.name).join(", ")}`,
              );
            }
            target = only.name;
          } else if (!info.functions.some((f) => f.name === target)) {
            throw new AppError(
              "BAD_INPUT",
              `${toolName} has no function "${target}"${didYouMean(
                target,
                info.functions.map((f) => f.name),
              )}`,
            );
          }
          return run.invoke(`${toolName}.${target}`, rest);
        },
      },
    ],
  };
}

async function unknownTool(
  catalog: ToolsetCatalog,
  session: Parameters<ToolsetCatalog["list"]>[0],
  name: string,
) {
  const names = (await catalog.list(session)).map((t) => t.name);
  return new AppError("NOT_FOUND", `no toolset named "${name}"${didYouMean(name, names)}`);
}

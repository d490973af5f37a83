/**
 * execute_code's schemas and tool config, built once per process: a server is built per HTTP
 * request, a parked request holds its server, and zod schemas are costly to construct.
 */
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import * as zMini from "zod/v4-mini";

const envelopeSchema = z
  .object({
    ok: z.boolean(),
    result: z.unknown().optional(),
    error: z.object({ kind: z.string(), message: z.string(), stack: z.string().optional() }).optional(),
    logs: z.array(z.object({ level: z.string(), text: z.string() })),
    calls: z.array(z.object({ capability: z.string(), category: z.string(), decision: z.string() }).loose()),
    images: z.array(
      z.object({ asset_id: z.string(), mime: z.string(), width: z.number(), height: z.number() }),
    ),
    durationMs: z.number(),
  })
  .loose();

export const executeInputSchema = z.object({
  code: z.string().min(1, "code is empty: send one ES module with a default export").max(200_000),
  title: z.string().max(200).optional(),
  /** The id of a plan (a plan-mode run's envelope.plan.id): ask a human for it, then run it for real. */
  plan: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe(
      "A plan id from a plan-mode run's envelope: asks a human to approve exactly those calls, then runs",
    ),
});

/**
 * The tool's schemas as the SDK builds them from shapes (its objectFromShape: a zod/v4-mini
 * object), but once: given shapes, it builds them again for every server.
 */
const executeInputObject = zMini.object(executeInputSchema.shape);
const executeOutputObject = zMini.object(envelopeSchema.shape);

export type ExecuteArgs = { code: string; title?: string | undefined; plan?: string | undefined };
export type ExecuteExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** How often a task's state is re-read (client polls, tasks/result waits, cancel watch). */
export const TASK_POLL_MS = 1_000;

export function executeToolConfig(toolDescription: string) {
  return {
    title: "Execute an action",
    description: toolDescription,
    inputSchema: executeInputObject,
    outputSchema: executeOutputObject,
  };
}

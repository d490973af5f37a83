/**
 * What the console's MCP servers page does, over the engine's own MCP source: save or import a
 * server and reach it at once (its tools show up for review), refresh, categorize, remove. Every
 * change invalidates this instance's registry; other instances see it within their short cache.
 */
import { z } from "zod";
import { CATEGORIES } from "../../core/capabilities/types";
import type { Db } from "../../db";
import { categorizeTools } from "./categorize";
import { parseMcpServersJson } from "./config";
import type { McpModuleSource } from "./module-source";
import { getServer, removeServer, saveServer, setServerSecret } from "./servers";

/** What the console's actions need: this plug-in's own source, and the registry to reload. */
export interface ConsoleEngine {
  sources: { mcp: { source: McpModuleSource } };
  registry: { invalidate(): void };
}

export const categorizeSchema = z.object({
  name: z.string().min(1).max(64),
  rules: z
    .array(z.object({ glob: z.string().min(1).max(200), category: z.enum([...CATEGORIES, "proposed"]) }))
    .min(1)
    .max(500),
});

/** Reaches the server; a failure is in its status (the page shows it), not an error of the save. */
async function reach(engine: ConsoleEngine, name: string): Promise<string | null> {
  try {
    await engine.sources.mcp.source.refresh(name);
    return null;
  } catch (error) {
    return (error as Error).message;
  } finally {
    engine.registry.invalidate();
  }
}

export async function saveServerFromConsole(db: Db, engine: ConsoleEngine, input: unknown, replace: boolean) {
  const saved = await saveServer(db, input, { replace });
  const connectError = await reach(engine, saved.name);
  return { ...saved, connectError };
}

export async function importServersFromConsole(
  db: Db,
  engine: ConsoleEngine,
  json: string,
  replace: boolean,
) {
  const servers = parseMcpServersJson(json);
  const results: { name: string; created: boolean; connectError: string | null }[] = [];
  for (const server of servers) {
    const saved = await saveServer(db, server, { replace });
    results.push({ ...saved, connectError: server.enabled ? await reach(engine, saved.name) : null });
  }
  return results;
}

export async function refreshServerFromConsole(db: Db, engine: ConsoleEngine, name: string) {
  await getServer(db, name);
  return { connectError: await reach(engine, name) };
}

export async function setSecretFromConsole(
  db: Db,
  engine: ConsoleEngine,
  input: { name: string; secret: string; value: string },
) {
  await setServerSecret(db, input.name, input.secret, input.value);
  return { connectError: await reach(engine, input.name) };
}

export async function categorizeFromConsole(
  db: Db,
  engine: ConsoleEngine,
  userId: string,
  input: z.infer<typeof categorizeSchema>,
) {
  const result = await categorizeTools(db, input.name, input.rules, userId);
  engine.registry.invalidate();
  return result;
}

export async function removeServerFromConsole(db: Db, engine: ConsoleEngine, name: string) {
  await removeServer(db, name);
  await engine.sources.mcp.source.manager.disconnect(name);
  engine.registry.invalidate();
}

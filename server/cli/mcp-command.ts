/**
 * `mcp`: serves execute_code and view_image over stdio with the key in TOOLSTORE_API_KEY.
 * stdout carries only the protocol; messages go to stderr.
 */

import { getEngine } from "../engine";
import { loadEnv } from "../env";
import { getMcpBackend } from "../mcp/mount";
import { serveMcpOverStdio } from "../mcp/stdio";
import { type CliCommand, EXIT } from "./command";
import { openMigratedDb } from "./open-db";

export const mcpCommand: CliCommand = {
  name: "mcp",
  summary: "serve the MCP tools over stdio (key from TOOLSTORE_API_KEY)",
  usage: `usage: TOOLSTORE_API_KEY=<key> npm run toolstore -- mcp

Serves execute_code and view_image over stdio for MCP clients that start a command.
Create a key with: npm run toolstore -- keys create --name <name>`,
  async run(_args, io) {
    const db = await openMigratedDb();
    await serveMcpOverStdio({ db, backend: getMcpBackend(), apiKey: loadEnv().TOOLSTORE_API_KEY });
    io.err("mcp: client disconnected");
    await (await getEngine()).shutdown();
    return EXIT.ok;
  },
};

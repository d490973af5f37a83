/**
 * Stopping ToolStore ends its MCP server processes even when close() is never reached: a process
 * that starts a server through the connection manager and then exits (as Next's SIGTERM handler
 * does with process.exit) leaves no server process behind. The server here is a real SDK stdio
 * server that, like many, keeps running after its stdin closes (it holds a timer), so only the
 * manager's exit handler can end it.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../../..");
const dir = mkdtempSync(path.join(tmpdir(), "toolstore-exit-"));
const SDK = path.join(ROOT, "node_modules/@modelcontextprotocol/sdk/dist/esm/server");
const STICKY = path.join(dir, "sticky-server.mjs");
writeFileSync(
  STICKY,
  `import { McpServer } from ${JSON.stringify(path.join(SDK, "mcp.js"))};
import { StdioServerTransport } from ${JSON.stringify(path.join(SDK, "stdio.js"))};
const server = new McpServer({ name: "sticky", version: "1" });
server.registerTool("ping", { description: "ping" }, async () => ({ content: [{ type: "text", text: "pong" }] }));
await server.connect(new StdioServerTransport());
setInterval(() => {}, 1000);
`,
);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SCRIPT = `
import { createConnectionManager } from "./server/modules/mcp-servers/connections.ts";
const manager = createConnectionManager();
await manager.listTools({
  name: "sticky",
  transport: "stdio",
  command: process.execPath,
  args: [${JSON.stringify(STICKY)}],
  callTimeoutMs: 20000,
});
console.log("PID " + manager.processes().get("sticky"));
process.exit(0);
`;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("[MCP SERVERS] no leaked processes", () => {
  it("kills the server processes when ToolStore's process exits", async () => {
    const child = spawn(path.join(ROOT, "node_modules/.bin/tsx"), ["--input-type=module", "-e", SCRIPT], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    expect(code).toBe(0);
    const pid = Number(/PID (\d+)/.exec(out)?.[1]);
    expect(pid).toBeGreaterThan(0);
    // SIGKILL from the exit handler is immediate; allow the kernel a moment to reap.
    for (let i = 0; i < 50 && alive(pid); i++) await new Promise((r) => setTimeout(r, 100));
    expect(alive(pid)).toBe(false);
  }, 60_000);
});

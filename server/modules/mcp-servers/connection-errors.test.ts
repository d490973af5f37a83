import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { AppError } from "../../core/errors";
import { explainConnectError, toolChangedError, upstreamCallError } from "./connection-errors";
import type { ConnectionConfig } from "./connections";

const http: ConnectionConfig = {
  name: "notes",
  transport: "http",
  url: "https://notes.example/mcp",
  callTimeoutMs: 500,
};
const stdio: ConnectionConfig = { name: "fs", transport: "stdio", command: "mcp-fs", callTimeoutMs: 500 };

describe("[MCP SERVERS] upstream failures", () => {
  it("names the fix for a failed connect: a 401 wants the header, a missing command wants PATH", () => {
    expect(explainConnectError(http, Object.assign(new Error("nope"), { code: 401 }))).toMatchObject({
      status: "unauthorized",
      lastError: expect.stringMatching(/answered 401 Unauthorized: set the Authorization header/),
    });
    expect(explainConnectError(http, new Error("fetch failed"))).toMatchObject({
      status: "error",
      lastError: expect.stringMatching(/^cannot reach https:\/\/notes\.example\/mcp/),
    });
    expect(explainConnectError(stdio, new Error("spawn mcp-fs ENOENT")).lastError).toMatch(
      /command "mcp-fs" was not found on PATH/,
    );
  });

  it("a timeout and a crash carry codes an action can branch on; a crash quotes the stderr tail", () => {
    const timeout = upstreamCallError(stdio, "read", new McpError(ErrorCode.RequestTimeout, "t"), "");
    expect(timeout).toBeInstanceOf(AppError);
    expect((timeout as AppError).code).toBe("LIMIT_EXCEEDED");
    expect((timeout as AppError).details).toMatchObject({ error: "timeout" });
    const crash = upstreamCallError(
      stdio,
      "read",
      new McpError(ErrorCode.ConnectionClosed, "c"),
      "a\nb\npanic!\n",
    );
    expect((crash as AppError).details).toMatchObject({ error: "upstream_crashed" });
    expect(crash.message).toMatch(/process exited during the call to read; .*\(stderr: a \| b \| panic!\)/);
  });

  it("a changed tool is a conflict with the accepted version, never a gate denial", () => {
    const changed = toolChangedError(http, "save-note", "abc");
    expect(changed.code).toBe("CONFLICT");
    expect(changed.details).toEqual({
      error: "tool_changed",
      reason: "the tool changed upstream since it was accepted and waits for review",
    });
    expect(toolChangedError(http, "save-note", undefined).message).toBe(
      "notes no longer lists the tool save-note; it was not called",
    );
  });
});

import { describe, expect, it } from "vitest";
import { pendingApprovalInfo } from "./mcp-backend";

describe("a pending approval as the MCP client sees it", () => {
  const approval = { id: "appr_1", capability: "fs.write_file", category: "write", expiresAt: 1_000 };

  it("[MCP]: short arguments are shown whole, as JSON", () => {
    expect(pendingApprovalInfo({ ...approval, args: { path: "/tmp/a" } })).toEqual({
      ...approval,
      argsPreview: '{"path":"/tmp/a"}',
    });
  });

  it("[MCP]: long arguments are cut to 400 characters and say how long they were", () => {
    const args = { content: "x".repeat(1_000) };
    const { argsPreview } = pendingApprovalInfo({ ...approval, args });
    const length = JSON.stringify(args).length;
    expect(argsPreview).toBe(`${JSON.stringify(args).slice(0, 400)}… (${length} chars)`);
  });
});

import { describe, expect, it } from "vitest";
import { elicitationModes } from "./approval-prompts";

describe("elicitation modes a client declared", () => {
  it("[MCP]: an empty elicitation capability is form mode; url and form are read as declared", () => {
    expect(elicitationModes(undefined)).toEqual({ form: false, url: false });
    expect(elicitationModes({})).toEqual({ form: true, url: false });
    expect(elicitationModes({ url: {} })).toEqual({ form: false, url: true });
    expect(elicitationModes({ form: {}, url: {} })).toEqual({ form: true, url: true });
  });
});

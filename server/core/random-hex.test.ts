import { describe, expect, it } from "vitest";
import { randomHex } from "./random-hex";

describe("randomHex", () => {
  it("hands out hex of the asked length, never the same bytes twice, across refills", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 1_000; i++) {
      const hex = randomHex(16); // 16 KB in all: the pool refills four times
      expect(hex).toMatch(/^[0-9a-f]{32}$/);
      seen.add(hex);
    }
    expect(seen.size).toBe(1_000);
    expect(randomHex(3)).toMatch(/^[0-9a-f]{6}$/);
    expect(randomHex(5_000)).toMatch(/^[0-9a-f]{10000}$/);
  });

  it("gives every bit value a fair share", () => {
    const counts = new Array<number>(16).fill(0);
    const text = Array.from({ length: 500 }, () => randomHex(16)).join("");
    for (const c of text) counts[Number.parseInt(c, 16)] = (counts[Number.parseInt(c, 16)] ?? 0) + 1;
    // 16,000 digits: about 1,000 each; a stuck or zeroed pool is far outside this.
    for (const n of counts) expect(n).toBeGreaterThan(800);
  });
});

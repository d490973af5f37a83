/** The signed checkpoint file: its signature, the highest seq kept across writers, and when it is written. */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import {
  checkpointProblem,
  checkpointSigned,
  createCheckpointWriter,
  readCheckpoint,
  signCheckpoint,
  writeCheckpoint,
} from "./audit-checkpoint";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolstore-checkpoint-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const key = randomBytes(32);
const head = (seq: number) => ({ seq, hash: `${seq}`.padStart(64, "a") });

describe("[AUDIT] audit checkpoints", () => {
  it("is signed by its key only: another key, or a changed seq or hash, does not check", () => {
    const cp = signCheckpoint(head(9), key);
    expect(checkpointSigned(cp, [randomBytes(32), key])).toBe(true);
    expect(checkpointSigned(cp, [randomBytes(32)])).toBe(false);
    expect(checkpointSigned({ ...cp, seq: 8 }, [key])).toBe(false);
    expect(checkpointSigned({ ...cp, hash: head(8).hash }, [key])).toBe(false);
  });

  it("a write never lowers the checkpoint another writer left", () => {
    const file = path.join(dir, "keep-highest.json");
    writeCheckpoint(file, signCheckpoint(head(10), key));
    writeCheckpoint(file, signCheckpoint(head(7), key));
    expect(readCheckpoint(file)).toMatchObject({ seq: 10 });
    writeCheckpoint(file, signCheckpoint(head(12), key));
    expect(readCheckpoint(file)).toMatchObject({ seq: 12 });
    expect(fs.readdirSync(dir).filter((f) => f.endsWith(".tmp"))).toEqual([]);
    fs.writeFileSync(path.join(dir, "junk.json"), "not json");
    expect(readCheckpoint(path.join(dir, "junk.json"))).toBe("unreadable");
    expect(readCheckpoint(path.join(dir, "absent.json"))).toBeNull();
  });

  it("the writer writes every N entries, after its delay, and on flush", () => {
    vi.useFakeTimers();
    try {
      const file = path.join(dir, "writer.json");
      const writer = createCheckpointWriter({ file, secretKey: key, everyEntries: 3, everyMs: 1000 });
      writer.noteHead(head(1));
      expect(readCheckpoint(file)).toBeNull();
      writer.noteHead(head(3));
      expect(readCheckpoint(file)).toMatchObject({ seq: 3 });
      writer.noteHead(head(4));
      vi.advanceTimersByTime(999);
      expect(readCheckpoint(file)).toMatchObject({ seq: 3 });
      vi.advanceTimersByTime(1);
      expect(readCheckpoint(file)).toMatchObject({ seq: 4 });
      writer.noteHead(head(5));
      writer.flush();
      expect(readCheckpoint(file)).toMatchObject({ seq: 5 });
    } finally {
      vi.useRealTimers();
    }
  });

  it("names the gap when the table ends before the checkpoint, and a replaced row at its seq", () => {
    const cp = signCheckpoint(head(20), key, new Date("2026-01-02T03:04:05Z"));
    expect(checkpointProblem(cp, head(15), null)).toBe(
      `the newest entries after seq 15 are missing: the checkpoint of 2026-01-02T03:04:05.000Z says seq 20, hash ${head(20).hash.slice(0, 16)}`,
    );
    expect(checkpointProblem(cp, null, null)).toMatch(/^the newest entries after seq 0 are missing/);
    expect(checkpointProblem(cp, head(25), "b".repeat(64))).toMatch(
      /^entry #20 is not the one that was checkpointed/,
    );
    expect(checkpointProblem(cp, head(25), head(20).hash)).toBeNull();
  });
});

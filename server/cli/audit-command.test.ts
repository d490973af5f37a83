/**
 * `audit verify` and `audit export` as a person runs them (a separate process on a SQLite file
 * with its secret key beside it): the chain head is anchored by the signed checkpoint, so the
 * newest entries deleted with the sqlite3 tool are named as missing, as is a row edited in the middle.
 */
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Db } from "../db";
import { deployMigrations } from "../db/migrate";
import { checkpointFilePath, createCheckpointWriter } from "../infra/audit-checkpoint";
import { type AuditExportHead, createAuditLog } from "../infra/audit-log";
import { newSecretKeyText, writeKeyFile } from "../services/secret-box";

const root = path.resolve(import.meta.dirname, "../..");
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolstore-audit-cli-"));
const dbFile = path.join(dir, "audit.db");
const keyFile = path.join(dir, "secret.key");
let db: Db;

function toolstore(...args: string[]) {
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: `file:${dbFile}` };
  delete env.TOOLSTORE_SECRET_KEY;
  const run = spawnSync(path.join(root, "node_modules", ".bin", "tsx"), ["server/cli/main.ts", ...args], {
    cwd: root,
    env,
    encoding: "utf8",
  });
  return { code: run.status, out: `${run.stdout}${run.stderr}` };
}

/** The sqlite3 command-line tool, as someone with write access to the file would use it. */
function sqlite(sql: string) {
  execFileSync("sqlite3", [dbFile, sql]);
}

beforeAll(async () => {
  await deployMigrations({ provider: "sqlite", url: dbFile });
  db = createDb({ provider: "sqlite", url: dbFile });
  const keyText = newSecretKeyText();
  writeKeyFile(keyFile, keyText);
  const checkpoints = createCheckpointWriter({
    file: checkpointFilePath(keyFile),
    secretKey: Buffer.from(keyText, "base64"),
    everyEntries: 1,
    everyMs: 0,
  });
  const log = createAuditLog(db, { checkpoints });
  for (let i = 1; i <= 20; i++) {
    await log.append({ actor: { type: "user", name: "ada" }, action: "rules.update", target: `rule:${i}` });
  }
}, 120_000);

afterAll(async () => {
  await db?.$disconnect();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("[AUDIT] npm run toolstore -- audit, anchored by the checkpoint", () => {
  it("verify passes on the whole chain and export ends with the head and the checkpoint", () => {
    const verify = toolstore("audit", "verify");
    expect(verify.out).toContain("audit log intact: 20 entries");
    expect(verify.out).toMatch(/the checkpoint of \S+ \(seq 20\) matches/);
    expect(verify.code).toBe(0);
    const lines = toolstore("audit", "export").out.trim().split("\n");
    expect(lines).toHaveLength(21);
    const head = JSON.parse(lines[20] ?? "") as AuditExportHead;
    const newest = JSON.parse(lines[19] ?? "") as { seq: number; hash: string };
    expect(head).toMatchObject({ type: "audit-head", seq: 20, hash: newest.hash });
    expect(head.checkpoint).toMatchObject({ seq: 20, hash: newest.hash, mac: expect.any(String) });
  }, 60_000);

  it("verify fails naming the gap after the newest 5 entries are deleted with sqlite3", () => {
    sqlite('DELETE FROM "AuditEntry" WHERE seq > 15;');
    const verify = toolstore("audit", "verify");
    expect(verify.code).toBe(1);
    expect(verify.out).toMatch(
      /the newest entries after seq 15 are missing: the checkpoint of \S+ says seq 20, hash [0-9a-f]{16}/,
    );
  }, 60_000);

  it("verify fails naming an entry edited in the middle", () => {
    sqlite(`UPDATE "AuditEntry" SET target = 'rule:other' WHERE seq = 7;`);
    const verify = toolstore("audit", "verify");
    expect(verify.code).toBe(1);
    expect(verify.out).toContain("audit log BROKEN at entry #7");
    expect(verify.out).toContain("changed after it was written");
  }, 60_000);

  it("a checkpoint not signed with the secret key is refused", () => {
    const file = checkpointFilePath(keyFile);
    const forged = { ...JSON.parse(fs.readFileSync(file, "utf8")), seq: 3 };
    fs.writeFileSync(file, JSON.stringify(forged));
    sqlite(`UPDATE "AuditEntry" SET target = 'rule:7' WHERE seq = 7;`);
    const verify = toolstore("audit", "verify");
    expect(verify.code).toBe(1);
    expect(verify.out).toContain("is not one this server's secret key signed");
  }, 60_000);
});

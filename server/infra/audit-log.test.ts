/**
 * The audit log's hash chain: appends from two "instances" (separate logs and clients over one
 * database) stay one linear chain, and `audit verify` names the first broken entry after a row is
 * edited or deleted. On PostgreSQL too when TOOLSTORE_TEST_POSTGRES_URL is set.
 */
import { randomBytes, randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../cli/run-cli";
import { createDb, type Db } from "../db";
import { deployMigrations } from "../db/migrate";
import { type DbTarget, parseDatabaseUrl, pgConfigFromUrl } from "../db/provider";
import { createCheckpointWriter } from "./audit-checkpoint";
import { createAuditLog, exportAuditJsonLines } from "./audit-log";
import { verifyAuditChain } from "./audit-verify";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolstore-audit-"));
const sqliteFile = path.join(dir, "audit.db");
// The CLI in this file's process opens the same database.
process.env.DATABASE_URL = `file:${sqliteFile}`;

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function cli(...argv: string[]) {
  const out: string[] = [];
  const code = await runCli(argv, { out: (t) => out.push(t), err: (t) => out.push(t), cwd: dir });
  return { code, out: out.join("\n") };
}

async function appendFromTwoInstances(a: Db, b: Db, n: number) {
  const one = createAuditLog(a);
  const two = createAuditLog(b);
  await Promise.all(
    Array.from({ length: n }, (_, i) =>
      (i % 2 ? one : two).append({
        actor: { type: "user", id: `u${i % 3}`, name: `user${i % 3}` },
        action: i % 4 ? "rules.update" : "apiKeys.revoke",
        target: `rule:${i}`,
        before: { enabled: true, i },
        after: { enabled: false, i },
        detail: { note: `"quoted" \\ and\nnewline ${i}` },
      }),
    ),
  );
}

function chainSuite(label: string, target: () => Promise<DbTarget>, drop?: () => Promise<void>) {
  describe(`[AUDIT] ${label}`, () => {
    let a: Db;
    let b: Db;

    beforeAll(async () => {
      const t = await target();
      await deployMigrations(t);
      a = createDb(t);
      b = createDb(t);
    }, 120_000);

    afterAll(async () => {
      await a?.$disconnect();
      await b?.$disconnect();
      await drop?.();
    });

    it("two instances appending at once build one linear chain", async () => {
      await appendFromTwoInstances(a, b, 40);
      const rows = await a.auditEntry.findMany({ orderBy: { seq: "asc" }, select: { seq: true } });
      expect(rows.map((r) => r.seq)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
      expect(await verifyAuditChain(a, 7)).toMatchObject({ ok: true, entries: 40 });
    });

    it("verify with the checkpoint names the newest entries deleted, and a forged checkpoint", async () => {
      const secretKey = randomBytes(32);
      const file = path.join(dir, `checkpoint-${label}.json`);
      const anchor = { file, secretKeys: [secretKey] };
      const checkpoints = createCheckpointWriter({ file, secretKey, everyEntries: 1, everyMs: 0 });
      const c = createDb(await target());
      const log = createAuditLog(c, { checkpoints });
      for (let i = 0; i < 7; i++) await log.append({ actor: { type: "system" }, action: "tail.test" });
      await c.$disconnect();
      const verdict = await verifyAuditChain(a, 1000, anchor);
      expect(verdict).toMatchObject({ ok: true, entries: 47, checkpoint: { seq: 47 } });
      const tail = await a.auditEntry.findMany({ where: { seq: { gt: 42 } }, orderBy: { seq: "asc" } });
      await a.auditEntry.deleteMany({ where: { seq: { gt: 42 } } });
      expect(await verifyAuditChain(a, 1000, anchor)).toMatchObject({
        ok: false,
        brokenSeq: 43,
        problem: expect.stringMatching(
          /^the newest entries after seq 42 are missing: the checkpoint of .* says seq 47/,
        ),
      });
      // Without the key's signature a checkpoint is no evidence either way.
      expect(await verifyAuditChain(a, 1000, { file, secretKeys: [randomBytes(32)] })).toMatchObject({
        ok: false,
        problem: expect.stringContaining("not one this server's secret key signed"),
      });
      await a.auditEntry.createMany({ data: tail });
      expect(await verifyAuditChain(a, 1000, anchor)).toMatchObject({ ok: true, entries: 47 });
      await a.auditEntry.deleteMany({ where: { seq: { gt: 40 } } });
    });

    it("verify names an edited entry, then a deleted one", async () => {
      const fifth = await a.auditEntry.findUniqueOrThrow({ where: { seq: 5 } });
      await a.auditEntry.update({ where: { id: fifth.id }, data: { after: '{"enabled":true}' } });
      expect(await verifyAuditChain(a)).toMatchObject({
        ok: false,
        brokenSeq: 5,
        brokenId: fifth.id,
        problem: expect.stringContaining("changed after it was written"),
      });
      await a.auditEntry.update({ where: { id: fifth.id }, data: { after: fifth.after } });
      expect(await verifyAuditChain(a)).toMatchObject({ ok: true });

      await a.auditEntry.delete({ where: { seq: 12 } });
      expect(await verifyAuditChain(a, 5)).toMatchObject({
        ok: false,
        brokenSeq: 12,
        problem: expect.stringContaining("missing (deleted)"),
      });
    });
  });
}

chainSuite("SQLite", async () => ({ provider: "sqlite", url: sqliteFile }));

const pgBase = process.env.TOOLSTORE_TEST_POSTGRES_URL;
if (pgBase) {
  const name = `toolstore_audit_${randomUUID().replace(/-/g, "").slice(0, 12)}`;
  let admin: pg.Client;
  // Created once: a test that opens another client asks for the same database again.
  let created: Promise<ReturnType<typeof parseDatabaseUrl>> | undefined;
  chainSuite(
    "PostgreSQL",
    () =>
      (created ??= (async () => {
        admin = new pg.Client(pgConfigFromUrl(pgBase));
        await admin.connect();
        await admin.query(`CREATE DATABASE "${name}"`);
        const u = new URL(pgBase);
        u.pathname = `/${name}`;
        return parseDatabaseUrl(u.toString());
      })()),
    async () => {
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.end();
    },
  );
}

describe("[AUDIT] npm run toolstore -- audit", () => {
  it("verify exits 1 naming the first broken entry; export prints JSON lines", async () => {
    // The SQLite suite above left entry #12 deleted.
    const verify = await cli("audit", "verify");
    expect(verify.code).toBe(1);
    expect(verify.out).toContain("audit log BROKEN at entry #12");
    const exported = await cli("audit", "export", "--action", "apiKeys.");
    expect(exported.code).toBe(0);
    const lines = exported.out.split("\n").map((l) => JSON.parse(l) as { action: string; hash: string });
    // The filtered entries, then the whole chain's head.
    const head = lines.pop();
    expect(lines.length).toBe(10);
    expect(lines.every((l) => l.action === "apiKeys.revoke" && /^[0-9a-f]{64}$/.test(l.hash))).toBe(true);
    expect(head).toMatchObject({ type: "audit-head", seq: 40, checkpoint: null });
    const db = createDb({ provider: "sqlite", url: sqliteFile });
    let count = 0;
    for await (const _ of exportAuditJsonLines(db)) count += 1;
    expect(count).toBe(39 + 1);
    await db.$disconnect();
  });
});

/**
 * Secrets at rest: stored sealed, opened only for a call, plain-text rows from before sealed on
 * first start, a missing key stops with a clear error and changes nothing, and `secrets
 * rotate-key` re-seals every row so the old key can go.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../cli/run-cli";
import { createDb, type Db } from "../db";
import { deployMigrations } from "../db/migrate";
import { openSecrets } from "../modules/mcp-servers/secrets";
import { loadToolsetRuntime, setToolsetEnvVar, syncToolsetsFolder } from "../modules/toolsets";
import { addWebhook } from "./notifications/channels";
import { ensureVapidKeys } from "./notifications/vapid";
import { createSecretBox, isSealed, newSecretKeyText, parseSecretKey } from "./secret-box";
import { channelSecretContext, prepareSecretBox, secretBoxFor } from "./stored-secrets";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolstore-secrets-"));
const dbFile = path.join(dir, "secrets.db");
const keyFile = path.join(dir, "secret.key");
process.env.DATABASE_URL = `file:${dbFile}`;
delete process.env.TOOLSTORE_SECRET_KEY;
const SECRET = 'tok"en\\with\nnewline';
let db: Db;
let toolsetId: string;

beforeAll(async () => {
  await deployMigrations({ provider: "sqlite", url: dbFile });
  db = createDb({ provider: "sqlite", url: dbFile });
  const sync = await syncToolsetsFolder(db, path.resolve("toolsets"));
  expect(sync.failed).toEqual([]);
  toolsetId = (await db.toolset.findUniqueOrThrow({ where: { name: "webhook" } })).id;
}, 120_000);

afterAll(async () => {
  await db?.$disconnect();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function cli(...argv: string[]) {
  const out: string[] = [];
  const code = await runCli(argv, { out: (t) => out.push(t), err: (t) => out.push(t), cwd: dir });
  return { code, out: out.join("\n") };
}

describe("[SECRETS] secret box", () => {
  it("seals with AES-GCM bound to a context; a moved or edited value does not open", () => {
    const box = createSecretBox([parseSecretKey(newSecretKeyText()) as Buffer]);
    const sealed = box.seal(SECRET, "toolset-env:a:TOKEN");
    expect(isSealed(sealed)).toBe(true);
    expect(sealed).not.toContain("tok");
    expect(box.open(sealed, "toolset-env:a:TOKEN")).toBe(SECRET);
    expect(() => box.open(sealed, "toolset-env:b:TOKEN")).toThrow(/altered or belongs to another row/);
    // One character of the body changed (never the last, whose low bits may be unused).
    const at = sealed.length - 3;
    const tampered = `${sealed.slice(0, at)}${sealed[at] === "A" ? "B" : "A"}${sealed.slice(at + 1)}`;
    expect(tampered).not.toBe(sealed);
    expect(() => box.open(tampered, "toolset-env:a:TOKEN")).toThrow();
    const other = createSecretBox([parseSecretKey(newSecretKeyText()) as Buffer]);
    expect(() => other.open(sealed, "toolset-env:a:TOKEN")).toThrow(/which this server does not have/);
  });
});

describe("[SECRETS] secrets at rest", () => {
  it("seals plain-text rows from before on first start, creating the key file with mode 0600", async () => {
    await db.toolsetEnvVar.create({
      data: { toolsetId, name: "WEBHOOK_TOKEN", value: SECRET, secret: true },
    });
    await db.toolsetEnvVar.create({
      data: { toolsetId, name: "WEBHOOK_URL", value: "http://127.0.0.1:1/hook", secret: false },
    });
    // An MCP server secret stored before encryption at rest, in its old plain form.
    const server = await db.mcpServer.create({
      data: { name: "remote", transport: "http", url: "http://127.0.0.1:1/mcp" },
    });
    await db.mcpServerSecret.create({
      data: { serverId: server.id, name: "TOKEN", sealed: `plain:v1:${SECRET}` },
    });
    expect(fs.existsSync(keyFile)).toBe(false);
    await secretBoxFor(db);
    const mcpRow = await db.mcpServerSecret.findFirstOrThrow({ where: { name: "TOKEN" } });
    expect(isSealed(mcpRow.sealed)).toBe(true);
    expect(mcpRow.sealed).not.toContain("tok");
    expect((await openSecrets(db, server.id, [mcpRow])).get("TOKEN")).toBe(SECRET);
    expect(fs.statSync(keyFile).mode & 0o777).toBe(0o600);
    const stored = await db.toolsetEnvVar.findMany({ where: { toolsetId }, orderBy: { name: "asc" } });
    expect(stored.map((r) => [r.name, isSealed(r.value)])).toEqual([
      ["WEBHOOK_TOKEN", true],
      ["WEBHOOK_URL", false],
    ]);
    expect(JSON.stringify(stored)).not.toContain("tok");
    const runtime = await loadToolsetRuntime(db, toolsetId);
    expect(runtime.env).toEqual({
      WEBHOOK_TOKEN: "{{secret:WEBHOOK_TOKEN}}",
      WEBHOOK_URL: "http://127.0.0.1:1/hook",
    });
    expect(runtime.secrets).toEqual({ WEBHOOK_TOKEN: SECRET });
  });

  it("stores a newly set secret sealed", async () => {
    await setToolsetEnvVar(db, { toolset: "webhook", name: "WEBHOOK_TOKEN", value: `${SECRET}-2` });
    const row = await db.toolsetEnvVar.findFirstOrThrow({ where: { toolsetId, name: "WEBHOOK_TOKEN" } });
    expect(isSealed(row.value)).toBe(true);
    expect((await loadToolsetRuntime(db, toolsetId)).secrets.WEBHOOK_TOKEN).toBe(`${SECRET}-2`);
  });

  it("a missing key stops with a clear error and changes nothing", async () => {
    const before = await db.toolsetEnvVar.findMany({ orderBy: { name: "asc" } });
    const moved = `${keyFile}.moved`;
    fs.renameSync(keyFile, moved);
    try {
      await expect(prepareSecretBox(db, { keyFile })).rejects.toThrow(
        /2 stored secret\(s\) are encrypted but no key was found: restore .*secret\.key or set TOOLSTORE_SECRET_KEY/,
      );
      expect(fs.existsSync(keyFile)).toBe(false); // no new key was made
      expect(await db.toolsetEnvVar.findMany({ orderBy: { name: "asc" } })).toEqual(before);
    } finally {
      fs.renameSync(moved, keyFile);
    }
  });

  it("`secrets rotate-key` re-seals every secret; the old key alone no longer opens them", async () => {
    const oldKey = fs.readFileSync(keyFile, "utf8");
    const oldRow = await db.toolsetEnvVar.findFirstOrThrow({ where: { toolsetId, name: "WEBHOOK_TOKEN" } });
    // A notification webhook's signing secret and the VAPID private key are sealed too.
    const hook = await addWebhook(db, {
      url: "http://127.0.0.1:1/hook",
      format: "json",
      secret: "hook-signing-s3cret",
    });
    const vapid = await ensureVapidKeys(db);
    const rotated = await cli("secrets", "rotate-key");
    expect(rotated).toMatchObject({ code: 0, out: expect.stringContaining("re-encrypted 4 secret(s)") });
    expect(fs.readFileSync(keyFile, "utf8")).not.toBe(oldKey);
    expect(fs.statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(`${keyFile}.previous`, "utf8").trim()).toBe(oldKey.trim());
    const newRow = await db.toolsetEnvVar.findFirstOrThrow({ where: { toolsetId, name: "WEBHOOK_TOKEN" } });
    expect(newRow.value).not.toBe(oldRow.value);
    const onlyOld = createSecretBox([parseSecretKey(oldKey) as Buffer]);
    expect(() => onlyOld.open(newRow.value, `toolset-env:${toolsetId}:WEBHOOK_TOKEN`)).toThrow(
      /does not have/,
    );
    fs.rmSync(`${keyFile}.previous`);
    const fresh = createDb({ provider: "sqlite", url: dbFile });
    try {
      expect((await loadToolsetRuntime(fresh, toolsetId)).secrets.WEBHOOK_TOKEN).toBe(`${SECRET}-2`);
      const mcpRow = await fresh.mcpServerSecret.findFirstOrThrow({ where: { name: "TOKEN" } });
      expect((await openSecrets(fresh, mcpRow.serverId, [mcpRow])).get("TOKEN")).toBe(SECRET);
      const channel = await fresh.notificationChannel.findUniqueOrThrow({ where: { id: hook.id } });
      const box = await secretBoxFor(fresh);
      expect(box.open(channel.sealed ?? "", channelSecretContext(channel.kind, channel.target))).toBe(
        "hook-signing-s3cret",
      );
      expect(await ensureVapidKeys(fresh)).toEqual(vapid);
    } finally {
      await fresh.$disconnect();
    }
    expect((await cli("secrets", "status")).out).toMatch(
      /^key [0-9a-f]{12} from .*secret\.key; 4 secret\(s\) encrypted$/,
    );
  });
});

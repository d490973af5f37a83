/**
 * The PostgreSQL instance channel against a real server: what one instance NOTIFYs reaches the
 * other's listeners, in order, and a burst of notifies never overlaps queries on the channel's
 * connection (pg warns that pg@9 will refuse that). Runs when TOOLSTORE_TEST_POSTGRES_URL names a
 * server (CI sets it).
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pgConfigFromUrl } from "../db/provider";
import { createPgChannel } from "./instance-channel";

const baseUrl = process.env.TOOLSTORE_TEST_POSTGRES_URL;

describe.runIf(!!baseUrl)("PostgreSQL instance channel", () => {
  const name = `toolstore_test_${randomUUID().replace(/-/g, "").slice(0, 12)}`;
  let admin: pg.Client;
  let url: string;

  beforeAll(async () => {
    admin = new pg.Client(pgConfigFromUrl(baseUrl as string));
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name}"`);
    const u = new URL(baseUrl as string);
    u.pathname = `/${name}`;
    url = u.toString();
  });

  afterAll(async () => {
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
  });

  it("a burst of notifies reaches the other instance in order, one query at a time", async () => {
    const deprecations: string[] = [];
    const onWarning = (warning: Error) => {
      if (warning.name === "DeprecationWarning") deprecations.push(warning.message);
    };
    process.on("warning", onWarning);
    const sender = createPgChannel(url);
    const receiver = createPgChannel(url);
    try {
      await Promise.all([sender.ready(), receiver.ready()]);
      const got: string[] = [];
      receiver.on("approval", (payload) => got.push(payload));
      const sent = Array.from({ length: 50 }, (_, i) => `approval-${i}`);
      for (const payload of sent) sender.notify("approval", payload);
      const until = Date.now() + 10_000;
      while (got.length < sent.length && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      expect(got).toEqual(sent);
      // Warnings are emitted on a later tick.
      await new Promise((r) => setTimeout(r, 50));
      expect(deprecations).toEqual([]);
    } finally {
      process.off("warning", onWarning);
      await sender.close();
      await receiver.close();
    }
  });
});

/**
 * `npm start`: create and migrate the database, load the toolsets folder, build when the sources
 * changed, print the first-run setup link, and serve the console (HOST/PORT) from a child process
 * (scripts/serve.ts: Next.js behind a node:http front that answers /api/mcp directly).
 * `--dev` serves with `next dev` instead of a build. Bad configuration ends with one clear line.
 */
import { spawn, spawnSync } from "node:child_process";
import net from "node:net";
import path from "node:path";
import { AppError, isAppError } from "../server/core/errors";
import { dbTarget, getDb } from "../server/db";
import { migrateIfNeeded } from "../server/db/prepare";
import { redactUrl } from "../server/db/provider";
import { loadEnv, publicUrl } from "../server/env";
import { logger } from "../server/infra/log";
import { SOURCE_PLUGINS } from "../server/modules";
import { issueSetupToken } from "../server/services/auth";
import { secretBoxFor } from "../server/services/stored-secrets";
import { buildIsCurrent, writeBuildStamp } from "./build-stamp";
import { servingEnv, servingNodeFlags } from "./serving-env";

const root = path.resolve(import.meta.dirname, "..");
const log = logger("start");
const nextBin = path.join(root, "node_modules", "next", "dist", "bin", "next");

function portFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", () => resolve(false));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/**
 * This process's Node flags (e.g. `node --cpu-prof --import tsx scripts/start.ts`), passed on to
 * the serving process; tsx's own loader flags are left out (the child names tsx itself).
 */
function nodeFlags(): string[] {
  const flags: string[] = [];
  const argv = process.execArgv;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (["--require", "-r", "--import", "--loader"].includes(arg) && argv[i + 1]?.includes("tsx")) i++;
    else if (!arg.includes("tsx")) flags.push(arg);
  }
  return flags;
}

async function main() {
  const dev = process.argv.includes("--dev");
  const env = loadEnv();
  const target = dbTarget();
  if (!(await portFree(env.HOST, env.PORT))) {
    throw new AppError(
      "CONFIG_INVALID",
      `port ${env.PORT} on ${env.HOST} is in use; stop the other server or start with PORT=${env.PORT + 1} npm start`,
    );
  }

  const applied = await migrateIfNeeded(target).catch((error: unknown) => {
    throw new AppError(
      "CONFIG_INVALID",
      `cannot open the database ${redactUrl(env.DATABASE_URL)}: ${error instanceof Error ? error.message.split("\n")[0] : error}; check DATABASE_URL`,
    );
  });
  log.info(
    `database: ${target.provider} ${target.provider === "sqlite" ? target.url : redactUrl(env.DATABASE_URL)}` +
      (applied.length ? ` (applied ${applied.length} migration${applied.length > 1 ? "s" : ""})` : ""),
  );

  const db = getDb();
  // The secret key (TOOLSTORE_SECRET_KEY or the key file, created now on a first start); stored
  // plain-text secrets from before encryption are sealed here. A missing key stops the start.
  await secretBoxFor(db);
  // Each source with a folder (toolsets, skills) publishes it; a broken entry never stops the start.
  for (const plugin of SOURCE_PLUGINS) {
    if ("loadAtStart" in plugin && plugin.loadAtStart) {
      log.info(await plugin.loadAtStart(db, { root, log: (line) => log.info(line) }));
    }
  }

  if (!dev && !buildIsCurrent(root)) {
    log.info("building the console (first start or sources changed)…");
    const build = spawnSync(process.execPath, [nextBin, "build"], { cwd: root, stdio: "inherit" });
    if (build.status !== 0) throw new AppError("INTERNAL", "next build failed; see the output above");
    writeBuildStamp(root);
  }

  const setupToken = await issueSetupToken(db, env.TOOLSTORE_SETUP_TOKEN);
  await db.$disconnect();

  const url = publicUrl(env);
  // Production serves through scripts/serve.ts (Next in-process behind the front server, which
  // answers /api/mcp directly); `--dev` keeps `next dev` and its reloads.
  const serveArgs = dev
    ? [nextBin, "dev"]
    : [...servingNodeFlags(nodeFlags()), "--import", "tsx", path.join(root, "scripts", "serve.ts")];
  const child = spawn(process.execPath, [...serveArgs, "-H", env.HOST, "-p", String(env.PORT)], {
    cwd: root,
    stdio: ["inherit", "pipe", "inherit"],
    env: servingEnv({ ...process.env, NODE_ENV: dev ? "development" : "production" }),
  });
  let announced = false;
  const json = env.TOOLSTORE_LOG_FORMAT === "json";
  const nextLog = logger("next");
  child.stdout.on("data", (chunk: Buffer) => {
    // In JSON mode every line of Next's own output becomes a JSON line too.
    if (!json) process.stdout.write(chunk);
    else for (const line of chunk.toString().split("\n")) if (line.trim()) nextLog.info(line.trim());
    if (!announced && /Ready|started server|Local:/i.test(chunk.toString())) {
      announced = true;
      log.info(json ? `ToolStore is serving ${url}` : `\nToolStore is serving ${url}`, { url });
      if (setupToken) {
        // The one-time link is the point of this line: it is printed whole, in both formats.
        const link = `${url}/setup?token=${encodeURIComponent(setupToken)}`;
        if (json)
          log.info("No users yet. Open the setup link to create the first admin.", { setup_url: link });
        else console.log(`\nNo users yet. Open this one-time link to create the first admin:\n  ${link}\n`);
      }
    }
  });
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => child.kill(signal));
  child.on("exit", (code) => process.exit(code ?? 0));
}

main().catch((error: unknown) => {
  const message = isAppError(error) ? error.message : error instanceof Error ? error.message : String(error);
  log.error(`toolstore: ${message}`);
  process.exit(1);
});

/** The e2e web server: a fresh database file every run, then the normal start command. */
import fs from "node:fs";

const file = (process.env.DATABASE_URL ?? "").replace(/^file:/, "");
if (!file.includes("e2e"))
  throw new Error(`e2e/serve.ts refuses to wipe ${file}; it only serves e2e databases`);
for (const suffix of ["", "-wal", "-shm", "-journal"]) fs.rmSync(`${file}${suffix}`, { force: true });
await import("../scripts/start");

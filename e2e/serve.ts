/** The e2e web server: a fresh database file every run, then the normal start command. */
import fs from "node:fs";
import path from "node:path";

for (const suffix of ["", "-wal", "-shm", "-journal"]) {
  fs.rmSync(path.resolve(`.data/e2e.db${suffix}`), { force: true });
}
await import("../scripts/start");

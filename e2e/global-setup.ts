import fs from "node:fs";
import path from "node:path";

/** Each e2e run starts from an empty database file of its own. */
export default function globalSetup() {
  for (const suffix of ["", "-wal", "-shm", "-journal"]) {
    fs.rmSync(path.resolve(`.data/e2e.db${suffix}`), { force: true });
  }
}

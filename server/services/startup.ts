/** What a starting instance does before it serves: load the toolsets folder. */
import fs from "node:fs";
import type { Db } from "../db";

/** Returns a one-line summary for the start log. */
export async function loadToolsetsFolder(_db: Db, dir: string): Promise<string> {
  if (!fs.existsSync(dir)) return `folder ${dir} not found; none loaded`;
  return `folder ${dir} (sync arrives with the toolsets service)`;
}

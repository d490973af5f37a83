import { defineConfig } from "prisma/config";

// Migrations are applied by scripts/db.ts (WASM schema engine), so the CLI here is used for
// `generate` only. The URL is read by server/env.ts at run time.
export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
});

/** @type {import('next').NextConfig} */
const nextConfig = {
  // NEXT_DIST_DIR lets parallel checkouts of a developer machine build side by side (default .next).
  distDir: process.env.NEXT_DIST_DIR || ".next",
  reactStrictMode: true,
  poweredByHeader: false,
  // Native addons and WebAssembly packages must be loaded by Node, not bundled.
  serverExternalPackages: [
    "better-sqlite3",
    "@prisma/adapter-better-sqlite3",
    "@prisma/adapter-pg",
    "@prisma/client",
    "@prisma/schema-engine-wasm",
    "pg",
    "quickjs-emscripten-core",
    "@jitl/quickjs-ng-wasmfile-release-sync",
    "typescript",
    "esbuild",
    // The live socket's server (its optional native addons are looked up at run time).
    "ws",
    // One copy of each for every route (the OpenTelemetry context and the metrics registry are shared).
    "prom-client",
    "@opentelemetry/api",
    "@opentelemetry/context-async-hooks",
    "@opentelemetry/core",
    "@opentelemetry/exporter-trace-otlp-http",
    "@opentelemetry/exporter-trace-otlp-proto",
    "@opentelemetry/resources",
    "@opentelemetry/sdk-trace",
  ],
  // Lint and type checks run in `npm test`; the build does not repeat them.
  typescript: { ignoreBuildErrors: true },
  async headers() {
    return [
      {
        source: "/:path*",
        headers: [
          { key: "X-Frame-Options", value: "DENY" },
          { key: "X-Content-Type-Options", value: "nosniff" },
          { key: "Referrer-Policy", value: "same-origin" },
        ],
      },
    ];
  },
};

export default nextConfig;

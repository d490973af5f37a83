/**
 * `toolstore/http`: outbound HTTP for actions, category `external`, limited to an allowlist of
 * hosts from configuration (checked on every redirect hop). Text bodies only, capped.
 */
import { AppError } from "../../errors";
import { createAllowlistFetch } from "../../sandbox/host-fetch";
import type { CapabilityModule } from "../types";

const HTTP_MODULE_VERSION = "builtin-http-1";

export interface HttpModuleOptions {
  /** Host patterns (`api.example.com`, `*.example.com`, `host:port`, `*`), or a function read per call. */
  allowedHosts: readonly string[] | (() => Promise<readonly string[]> | readonly string[]);
  timeoutMs?: number;
  maxBodyBytes?: number;
}

export function createHttpModule(options: HttpModuleOptions): CapabilityModule {
  const timeoutMs = options.timeoutMs ?? 15_000;
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const hosts = async () =>
    typeof options.allowedHosts === "function" ? await options.allowedHosts() : options.allowedHosts;
  return {
    name: "http",
    description: "HTTP requests to hosts an admin allowed.",
    source: "builtin",
    versionHash: HTTP_MODULE_VERSION,
    exports: [
      {
        spec: {
          name: "http.fetch",
          description:
            "HTTP request to an allowed host. Returns { status, ok, headers, body } with body as text (capped at 1 MiB).",
          category: "external",
          inputSchema: {
            type: "object",
            properties: {
              url: { type: "string", format: "uri" },
              method: {
                type: "string",
                enum: ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"],
                default: "GET",
              },
              headers: { type: "object", additionalProperties: { type: "string" } },
              body: { type: "string" },
            },
            required: ["url"],
            additionalProperties: false,
          },
          userMessage: (args) => `${String(args.method ?? "GET")} ${String(args.url)}`,
        },
        impl: async (run, args) => {
          const allowed = await hosts();
          if (allowed.length === 0) {
            throw new AppError(
              "FORBIDDEN",
              "no hosts are allowed for http.fetch; an admin can add some in the settings",
            );
          }
          const fetcher = createAllowlistFetch({ allowedHosts: allowed, timeoutMs, maxBodyBytes });
          const request = {
            url: String(args.url),
            method: String(args.method ?? "GET"),
            headers: (args.headers ?? {}) as Record<string, string>,
            ...(typeof args.body === "string" ? { body: args.body } : {}),
          };
          const res = await fetcher(request, run.signal);
          return {
            status: res.status,
            ok: res.status >= 200 && res.status < 300,
            url: res.url,
            headers: res.headers,
            body: res.body,
          };
        },
      },
    ],
  };
}

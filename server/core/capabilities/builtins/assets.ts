/**
 * `toolstore/assets`: keep an image the action produced (base64 PNG) and hand back a handle.
 * Pixels stay in the asset store; the envelope lists `{ asset_id, mime, width, height }` and
 * surfaces fetch the bytes by id (MCP `view_image`). `save` is `write`: it persists data.
 */
import { AppError } from "../../errors";
import type { AssetStore } from "../ports";
import { sha256Hex } from "../snapshot";
import type { CapabilityModule } from "../types";

const ASSETS_MODULE_VERSION = "builtin-assets-1";
const DEFAULT_MAX_IMAGE_BYTES = 5 * 1024 * 1024;
const MAX_DIMENSION = 16_384;

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const IEND = [0, 0, 0, 0, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82];

/** Width and height from a PNG's IHDR; throws AppError BAD_INPUT for anything that is not a whole PNG. */
export function readPngHeader(bytes: Uint8Array): { width: number; height: number } {
  const fail = (why: string) => new AppError("BAD_INPUT", `data_base64 is not a PNG image: ${why}`);
  if (bytes.length < PNG_SIGNATURE.length + 25 + IEND.length) throw fail("too short");
  if (!PNG_SIGNATURE.every((b, i) => bytes[i] === b)) throw fail("missing PNG signature");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const type = String.fromCharCode(bytes[12] ?? 0, bytes[13] ?? 0, bytes[14] ?? 0, bytes[15] ?? 0);
  if (view.getUint32(8) !== 13 || type !== "IHDR") throw fail("first chunk is not IHDR");
  const width = view.getUint32(16);
  const height = view.getUint32(20);
  if (width < 1 || height < 1 || width > MAX_DIMENSION || height > MAX_DIMENSION) {
    throw fail(`dimensions ${width}x${height} are outside 1..${MAX_DIMENSION}`);
  }
  const tail = bytes.subarray(bytes.length - IEND.length);
  if (!IEND.every((b, i) => tail[i] === b)) throw fail("truncated (no IEND chunk at the end)");
  return { width, height };
}

function decodeBase64(data: string, maxBytes: number): Uint8Array {
  const body = data.replace(/^data:image\/png;base64,/, "").replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(body))
    throw new AppError("BAD_INPUT", "data_base64 is not valid base64");
  if (Math.floor((body.length * 3) / 4) > maxBytes) {
    throw new AppError("LIMIT_EXCEEDED", `image is larger than ${maxBytes} bytes`);
  }
  return new Uint8Array(Buffer.from(body, "base64"));
}

export interface AssetsModuleOptions {
  store: AssetStore;
  maxImageBytes?: number;
}

export function createAssetsModule(options: AssetsModuleOptions): CapabilityModule {
  const maxBytes = options.maxImageBytes ?? DEFAULT_MAX_IMAGE_BYTES;
  return {
    name: "assets",
    description: "Keep images the action produced (PNG) and get handles to show them; list earlier ones.",
    source: "builtin",
    versionHash: ASSETS_MODULE_VERSION,
    exports: [
      {
        spec: {
          name: "assets.save",
          description:
            "Save a PNG image given as base64. Returns { asset_id, mime, width, height }; surfaces show it by asset_id (never return pixels in the result).",
          category: "write",
          inputSchema: {
            type: "object",
            properties: {
              data_base64: { type: "string", minLength: 1 },
              name: { type: "string", maxLength: 200 },
            },
            required: ["data_base64"],
            additionalProperties: false,
          },
          userMessage: (args) =>
            `save an image${typeof args.name === "string" ? ` "${args.name}"` : ""} (${Math.round((String(args.data_base64).length * 3) / 4 / 1024)} KB)`,
        },
        impl: async (run, args) => {
          const bytes = decodeBase64(String(args.data_base64), maxBytes);
          const { width, height } = readPngHeader(bytes);
          const saved = await options.store.save({
            userId: run.session.userId || null,
            runId: run.sandboxed ? run.runId : null,
            mime: "image/png",
            width,
            height,
            bytes,
            sha256: sha256Hex(Buffer.from(bytes).toString("latin1")),
          });
          const image = { asset_id: saved.id, mime: "image/png", width, height };
          run.reportImage?.(image);
          return typeof args.name === "string" ? { ...image, name: args.name } : image;
        },
      },
      {
        spec: {
          name: "assets.list",
          description:
            "List images saved earlier by this user, newest first: [{ asset_id, mime, width, height, created_at }].",
          category: "read",
          inputSchema: {
            type: "object",
            properties: { limit: { type: "integer", minimum: 1, maximum: 100, default: 20 } },
            additionalProperties: false,
          },
        },
        impl: async (run, args) => {
          const rows = await options.store.list({
            userId: run.session.userId || null,
            limit: Number(args.limit ?? 20),
          });
          return {
            assets: rows.map((r) => ({
              asset_id: r.id,
              mime: r.mime,
              width: r.width,
              height: r.height,
              created_at: new Date(r.createdAt).toISOString(),
            })),
          };
        },
      },
    ],
  };
}

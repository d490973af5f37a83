/**
 * An upstream `tools/call` result as the value an action receives: structuredContent, or JSON
 * text, is the value; other text is a string; an image is stored as an asset and returned as its
 * handle (so `view_image` shows it and the envelope lists it); isError is thrown with the
 * upstream's message, which the action can catch.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { readPngHeader } from "../../core/capabilities/builtins/assets";
import type { AssetStore } from "../../core/capabilities/ports";
import { sha256Hex } from "../../core/capabilities/snapshot";
import type { CapabilityRun, ImageRef } from "../../core/capabilities/types";

const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

function textOf(result: CallToolResult): string {
  return result.content
    .filter((c) => c.type === "text")
    .map((c) => (c as { text: string }).text)
    .join("\n");
}

function parseJsonText(text: string): unknown {
  const trimmed = text.trim();
  if (!/^[[{"]|^-?\d|^(true|false|null)$/.test(trimmed)) return text;
  try {
    return JSON.parse(trimmed);
  } catch {
    return text;
  }
}

async function saveImage(
  run: CapabilityRun,
  assets: AssetStore,
  data: string,
  mime: string,
): Promise<ImageRef & { type: "image" }> {
  const bytes = new Uint8Array(Buffer.from(data, "base64"));
  if (bytes.length > MAX_IMAGE_BYTES)
    throw new Error(`the upstream image is larger than ${MAX_IMAGE_BYTES} bytes`);
  let width = 0;
  let height = 0;
  if (mime === "image/png") ({ width, height } = readPngHeader(bytes));
  const saved = await assets.save({
    userId: run.session.userId || null,
    runId: run.sandboxed ? run.runId : null,
    mime,
    width,
    height,
    bytes,
    sha256: sha256Hex(Buffer.from(bytes).toString("latin1")),
  });
  const image = { asset_id: saved.id, mime, width, height };
  run.reportImage?.(image);
  return { type: "image", ...image };
}

export async function mapToolResult(
  result: CallToolResult,
  run: CapabilityRun,
  assets: AssetStore,
): Promise<unknown> {
  if (result.isError) {
    throw new Error(textOf(result) || "the upstream tool reported an error without a message");
  }
  if (result.structuredContent !== undefined && result.structuredContent !== null) {
    return result.structuredContent;
  }
  const values: unknown[] = [];
  for (const block of result.content ?? []) {
    switch (block.type) {
      case "text":
        values.push(parseJsonText(block.text));
        break;
      case "image":
        values.push(await saveImage(run, assets, block.data, block.mimeType));
        break;
      case "audio":
        values.push({ type: "audio", mime: block.mimeType, bytes: Math.floor((block.data.length * 3) / 4) });
        break;
      case "resource_link":
        values.push({
          type: "resource_link",
          uri: block.uri,
          name: block.name,
          mimeType: block.mimeType ?? null,
        });
        break;
      case "resource": {
        const r = block.resource as { uri: string; mimeType?: string; text?: string; blob?: string };
        values.push({
          type: "resource",
          uri: r.uri,
          mimeType: r.mimeType ?? null,
          ...(typeof r.text === "string"
            ? { text: r.text }
            : { bytes: Math.floor(((r.blob ?? "").length * 3) / 4) }),
        });
        break;
      }
      default:
        values.push(block);
    }
  }
  if (values.length === 0) return null;
  return values.length === 1 ? values[0] : values;
}

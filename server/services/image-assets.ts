/**
 * Image bytes for the console. Pixels never ride in envelopes; pages show them through
 * /api/assets/<id>, which asks here whether the signed-in user may see the asset.
 */
import type { Db } from "../db";
import type { SessionUser } from "./auth";

/**
 * Who may see an image: its owner, an admin, and anyone who may see the run that made it (every
 * console role may read run history). An asset outside any run stays with its owner. An unknown
 * id and a forbidden one get the same answer.
 */
export async function readImageForUser(
  db: Db,
  user: SessionUser,
  id: string,
): Promise<{ mime: string; bytes: Uint8Array; sha256: string } | null> {
  const asset = await db.imageAsset.findUnique({
    where: { id },
    select: { mime: true, bytes: true, sha256: true, userId: true, runId: true },
  });
  if (!asset) return null;
  const visible = asset.userId === user.id || user.role === "admin" || asset.runId !== null;
  if (!visible) return null;
  return { mime: asset.mime, bytes: asset.bytes, sha256: asset.sha256 };
}

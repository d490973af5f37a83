import { cookies } from "next/headers";
import { getDb } from "@/server/db";
import { SESSION_COOKIE, sessionUser } from "@/server/services/auth";
import { readImageForUser } from "@/server/services/image-assets";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** The bytes of one image asset, for a signed-in user who may see it. */
export async function GET(_req: Request, { params }: { params: Promise<{ id: string }> }) {
  const db = getDb();
  const user = await sessionUser(db, (await cookies()).get(SESSION_COOKIE)?.value);
  if (!user) return new Response("Sign in to see images.", { status: 401 });
  const { id } = await params;
  const image = await readImageForUser(db, user, id);
  if (!image) return new Response("No such image.", { status: 404 });
  return new Response(Buffer.from(image.bytes), {
    headers: {
      "content-type": image.mime === "image/png" ? "image/png" : "application/octet-stream",
      "cache-control": "private, max-age=3600",
      etag: `"${image.sha256}"`,
      "content-security-policy": "default-src 'none'",
      "x-content-type-options": "nosniff",
    },
  });
}

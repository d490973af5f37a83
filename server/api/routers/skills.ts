import { z } from "zod";
import { DEFAULT_SKILL_LIMITS } from "../../core/skills";
import {
  diffSkillVersions,
  filesFromZip,
  getSkillForConsole,
  listSkillsForConsole,
  publishSkill,
  readSkillFileForConsole,
  removeSkill,
  unwrapSkillFolder,
} from "../../modules/skills";
import { adminProcedure, router, viewerProcedure } from "../trpc";

const name = z.object({ name: z.string().min(1).max(64) });
const base64Cap = Math.ceil((DEFAULT_SKILL_LIMITS.maxTotalBytes * 4) / 3) + 1024;

const uploadInput = z.union([
  z.object({
    kind: z.literal("folder"),
    name: z.string().min(1).max(64).optional(),
    files: z
      .array(z.object({ path: z.string().min(1).max(1024), base64: z.string().max(base64Cap) }))
      .min(1, "the folder is empty")
      .max(DEFAULT_SKILL_LIMITS.maxFiles + 50),
  }),
  z.object({
    kind: z.literal("zip"),
    name: z.string().min(1).max(64).optional(),
    base64: z.string().max(base64Cap),
  }),
]);

const bytes = (b64: string) => new Uint8Array(Buffer.from(b64, "base64"));

export const skillsRouter = router({
  list: viewerProcedure
    .input(z.object({ query: z.string().max(200).optional() }).optional())
    .query(({ ctx, input }) => listSkillsForConsole(ctx.db, input?.query ?? "")),
  get: viewerProcedure
    .input(name.extend({ version: z.number().int().min(1).optional() }))
    .query(({ ctx, input }) => getSkillForConsole(ctx.db, input.name, input.version)),
  file: viewerProcedure
    .input(name.extend({ path: z.string().min(1).max(1024), version: z.number().int().min(1).optional() }))
    .query(({ ctx, input }) => readSkillFileForConsole(ctx.db, input.name, input.path, input.version)),
  diff: viewerProcedure
    .input(name.extend({ from: z.number().int().min(1), to: z.number().int().min(1) }))
    .query(({ ctx, input }) => diffSkillVersions(ctx.db, input.name, input.from, input.to)),

  /** A folder (files with relative paths) or a zip; each upload with new content is a version. */
  upload: adminProcedure.input(uploadInput).mutation(({ ctx, input }) => {
    const files =
      input.kind === "zip"
        ? filesFromZip(bytes(input.base64))
        : input.files.map((f) => ({ path: f.path, bytes: bytes(f.base64) }));
    const skill = unwrapSkillFolder(files, input.name);
    return publishSkill(ctx.db, { ...skill, origin: "upload", userId: ctx.user.id });
  }),
  remove: adminProcedure.input(name).mutation(({ ctx, input }) => removeSkill(ctx.db, input.name)),
});

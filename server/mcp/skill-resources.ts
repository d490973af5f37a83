/**
 * Skills as MCP resources, in the shape of the Skills-over-MCP extension (SEP-2640,
 * `io.modelcontextprotocol/skills`): every file of a skill is a resource
 * `skill://<name>/<path>` (SKILL.md included) with its MIME type, size and a sha256 digest, and
 * `skill://index.json` lists each skill's entry (the SKILL.md URI, the frontmatter as written and
 * the manifest of its files); the extension's `skills/list` and `skills/get` methods return the
 * same entries. Reading a skill activates nothing: allowed-tools grants nothing.
 */
import { type McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ErrorCode, McpError, type ServerResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { SkillRecord, SkillStore } from "../core/skills";

const SKILLS_EXTENSION = "io.modelcontextprotocol/skills";
const SKILL_INDEX_URI = "skill://index.json";

const fileUri = (skill: string, path: string) =>
  `skill://${skill}/${path.split("/").map(encodeURIComponent).join("/")}`;
const digest = (sha256: string) => `sha256:${sha256}`;

/** One skill's entry: the SKILL.md URI, the frontmatter verbatim, and a manifest of every file. */
function skillEntry(skill: SkillRecord) {
  return {
    uri: fileUri(skill.name, "SKILL.md"),
    name: skill.name,
    frontmatter: skill.frontmatter,
    version: skill.version,
    contentHash: skill.contentHash,
    resources: skill.files.map((f) => ({
      uri: fileUri(skill.name, f.path),
      mimeType: f.mime,
      size: f.size,
      digest: digest(f.sha256),
    })),
  };
}

async function allSkills(store: SkillStore): Promise<SkillRecord[]> {
  const list = await store.list();
  const records = await Promise.all(list.map((s) => store.get(s.name)));
  return records.filter((r): r is SkillRecord => r !== null);
}

const listSkillsRequest = z.object({
  method: z.literal("skills/list"),
  params: z.object({ cursor: z.string().optional() }).loose().optional(),
});
const getSkillRequest = z.object({
  method: z.literal("skills/get"),
  params: z.object({ uri: z.string() }).loose(),
});

/** Registers the skill resources on a server; `store` null when the key may not read skills. */
export function registerSkillResources(server: McpServer, store: SkillStore | null): void {
  if (!store) return;
  // One page: a ToolStore holds few enough skills to list them all.
  server.server.setRequestHandler(
    listSkillsRequest,
    async () => ({ skills: (await allSkills(store)).map(skillEntry) }) as unknown as ServerResult,
  );
  server.server.setRequestHandler(getSkillRequest, async (request) => {
    const match = /^skill:\/\/([^/]+)\/SKILL\.md$/.exec(request.params.uri);
    const skill = match?.[1] ? await store.get(decodeURIComponent(match[1])) : null;
    if (!skill)
      throw new McpError(
        ErrorCode.InvalidParams,
        `no skill at ${request.params.uri}; skills/list lists them`,
      );
    return { skill: skillEntry(skill) } as unknown as ServerResult;
  });
  server.registerResource(
    "skills-index",
    SKILL_INDEX_URI,
    {
      title: "Skills",
      description:
        "Every skill: its SKILL.md URI, frontmatter, and files with MIME type, size and sha256 digest.",
      mimeType: "application/json",
    },
    async (uri) => ({
      contents: [
        {
          uri: uri.href,
          mimeType: "application/json",
          text: JSON.stringify(
            { extension: SKILLS_EXTENSION, skills: (await allSkills(store)).map(skillEntry) },
            null,
            2,
          ),
        },
      ],
    }),
  );
  server.registerResource(
    "skill-files",
    new ResourceTemplate("skill://{skill}/{+path}", {
      list: async () => ({
        resources: (await allSkills(store)).flatMap((skill) =>
          skill.files.map((f) => ({
            uri: fileUri(skill.name, f.path),
            name: `${skill.name}/${f.path}`,
            ...(f.path === "SKILL.md" ? { title: skill.name, description: skill.description } : {}),
            mimeType: f.mime,
            size: f.size,
            _meta: { [SKILLS_EXTENSION]: { skill: skill.name, digest: digest(f.sha256) } },
          })),
        ),
      }),
    }),
    { title: "Skill files", description: "One file of a skill: skill://<name>/<path>." },
    async (uri, variables) => {
      const name = decodeURIComponent(String(variables.skill));
      const path = String(variables.path)
        .split("/")
        .map((p) => decodeURIComponent(p))
        .join("/");
      const file = await store.readFile(name, path);
      if (!file) throw new Error(`no skill file ${uri.href}; read ${SKILL_INDEX_URI} for the list`);
      const meta = {
        _meta: { [SKILLS_EXTENSION]: { digest: digest(file.entry.sha256), size: file.entry.size } },
      };
      return {
        contents: [
          file.entry.text
            ? {
                uri: uri.href,
                mimeType: file.entry.mime,
                text: new TextDecoder().decode(file.bytes),
                ...meta,
              }
            : {
                uri: uri.href,
                mimeType: file.entry.mime,
                blob: Buffer.from(file.bytes).toString("base64"),
                ...meta,
              },
        ],
      };
    },
  );
}

/**
 * The registered sources of capabilities: one line each. A new source is a folder beside these
 * with a SourcePlugin (./plugin.ts) and one line here; the composition root builds them all.
 */
import { librariesPlugin } from "./libraries/plugin";
import { mcpServersPlugin } from "./mcp-servers/plugin";
import { skillsPlugin } from "./skills/plugin";
import { toolsetsPlugin } from "./toolsets/plugin";

export const SOURCE_PLUGINS = [toolsetsPlugin, mcpServersPlugin, skillsPlugin, librariesPlugin] as const;

export type {
  AcceptReviewInput,
  CategoryReviewPart,
  ReviewItem,
  SourceContext,
  SourceParts,
  SourcePlugin,
} from "./plugin";

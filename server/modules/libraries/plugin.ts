/**
 * The library modules as a source plug-in: `toolstore/lib/yaml`, `/csv`, `/dates`. They are not
 * capability modules: no category, no review, no gate; the engine keeps them in its library
 * table (server/core/libraries) and the sandbox loads them into the action itself.
 */
import type { SourcePlugin } from "../plugin";
import { csvLibrary } from "./csv";
import { datesLibrary } from "./dates";
import { yamlLibrary } from "./yaml";

export const SHIPPED_LIBRARIES = [yamlLibrary, csvLibrary, datesLibrary] as const;

export const librariesPlugin = {
  id: "libraries",
  kind: "library",
  create: () => ({ libraries: [...SHIPPED_LIBRARIES] }),
} satisfies SourcePlugin;

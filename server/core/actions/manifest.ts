/**
 * The pre-flight manifest of an action, read from its source without running it: the modules it
 * imports (with the names it uses) and every place it calls an imported capability, with the line.
 * The approval card and the run page show it so an approver sees what else the action will do.
 * Parsing uses acorn, as the static check does; nothing is evaluated.
 */
import { type Node, parse } from "acorn";
import { type AnyNode, nameOf, walkNodes } from "./action-ast";
import { MODULE_PREFIX } from "./static-check";

export interface ManifestImport {
  module: string;
  /** Imported export names; `*` for a namespace import. */
  names: string[];
}

export interface ManifestCallSite {
  /** Wire name `module.export`. */
  capability: string;
  /** 1-based line of the call. */
  line: number;
}

export interface ActionManifest {
  imports: ManifestImport[];
  callSites: ManifestCallSite[];
  /** Set when the source does not parse; imports and call sites are then empty. */
  parseError: string | null;
}

export function readActionManifest(code: string): ActionManifest {
  let program: Node;
  try {
    program = parse(code, { ecmaVersion: "latest", sourceType: "module", locations: true });
  } catch (error) {
    return { imports: [], callSites: [], parseError: error instanceof Error ? error.message : String(error) };
  }
  const imports = new Map<string, Set<string>>();
  /** Local binding -> capability wire name (named import) or module (namespace import). */
  const named = new Map<string, string>();
  const namespaces = new Map<string, string>();

  for (const node of (program as unknown as { body: AnyNode[] }).body) {
    if (node.type !== "ImportDeclaration") continue;
    const spec = String((node.source as { value?: unknown }).value);
    if (!spec.startsWith(MODULE_PREFIX)) continue;
    const module = spec.slice(MODULE_PREFIX.length);
    const names = imports.get(module) ?? new Set<string>();
    imports.set(module, names);
    for (const s of node.specifiers as AnyNode[]) {
      const local = nameOf(s.local);
      if (s.type === "ImportSpecifier") {
        const exported = nameOf(s.imported);
        names.add(exported);
        named.set(local, `${module}.${exported}`);
      } else if (s.type === "ImportNamespaceSpecifier") {
        names.add("*");
        namespaces.set(local, module);
      }
    }
  }

  const callSites: ManifestCallSite[] = [];
  walkNodes(program, (node) => {
    if (node.type === "CallExpression") {
      const capability = calleeCapability(node.callee as AnyNode, named, namespaces);
      if (capability) callSites.push({ capability, line: node.loc?.start.line ?? 0 });
    }
  });
  callSites.sort((a, b) => a.line - b.line || a.capability.localeCompare(b.capability));
  return {
    imports: [...imports].map(([module, names]) => ({ module, names: [...names] })),
    callSites,
    parseError: null,
  };
}

function calleeCapability(
  callee: AnyNode,
  named: Map<string, string>,
  namespaces: Map<string, string>,
): string | null {
  if (callee.type === "Identifier") return named.get(nameOf(callee)) ?? null;
  if (callee.type === "MemberExpression" && !callee.computed) {
    const object = callee.object as AnyNode;
    const module = object.type === "Identifier" ? namespaces.get(nameOf(object)) : undefined;
    if (module) return `${module}.${nameOf(callee.property)}`;
  }
  return null;
}

/**
 * Helpers over acorn's tree of an action's source, shared by the static check and the manifest.
 * Nothing here evaluates code.
 */
import type { Node } from "acorn";

export interface AnyNode extends Node {
  [key: string]: unknown;
}

/** The name an import or export specifier stands for: an identifier's name or a string literal's value. */
export function nameOf(node: unknown): string {
  const n = node as { type?: string; name?: string; value?: unknown };
  return n.type === "Identifier" ? String(n.name) : String(n.value);
}

/**
 * Calls `visit` on every node under `root`. Iterative: deeply nested code must not overflow the
 * server's stack.
 */
export function walkNodes(root: Node, visit: (node: AnyNode) => void): void {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop() as AnyNode | null;
    if (!node || typeof node !== "object") continue;
    visit(node);
    for (const key in node) {
      if (key === "loc" || key === "start" || key === "end") continue;
      const child = node[key];
      if (Array.isArray(child)) {
        for (const c of child) if (c && typeof c === "object") stack.push(c);
      } else if (child && typeof child === "object" && typeof (child as AnyNode).type === "string") {
        stack.push(child);
      }
    }
  }
}

/**
 * How an agent's one arguments object reaches a binding: by parameter name, in declaration order.
 * Also resolves the store module's `execute({ tool_name, arguments: { function, ... } })` form.
 */
import { AppError } from "../errors";
import { closestNames } from "./names";
import type { ToolsetBinding } from "./types";

/** `{ location, unit }` -> `[location, unit]` for `get_weather(location, unit)`; absent names stay undefined. */
export function toPositionalArgs(
  binding: Pick<ToolsetBinding, "params">,
  args: Record<string, unknown>,
): unknown[] {
  const positional = binding.params.map((p) => (Object.hasOwn(args, p) ? args[p] : undefined));
  while (positional.length > 0 && positional[positional.length - 1] === undefined) positional.pop();
  return positional;
}

const STORE_FUNCTION_KEY = "function";

/**
 * Splits store-call arguments into the binding name and its own arguments. `function` may be left
 * out when the toolset has exactly one binding. Throws AppError BAD_INPUT with a hint otherwise.
 */
export function resolveStoreCall(
  toolset: { name: string; bindings: Pick<ToolsetBinding, "name">[] },
  args: Record<string, unknown>,
): { binding: string; args: Record<string, unknown> } {
  const { [STORE_FUNCTION_KEY]: fn, ...rest } = args;
  const names = toolset.bindings.map((b) => b.name);
  if (fn === undefined) {
    if (names.length === 1) return { binding: names[0] as string, args: rest };
    throw new AppError(
      "BAD_INPUT",
      `toolset "${toolset.name}" has ${names.length} functions; name one in arguments.function: ${names.map((n) => `"${n}"`).join(", ")}`,
    );
  }
  if (typeof fn !== "string") {
    throw new AppError(
      "BAD_INPUT",
      `arguments.function must be a string naming a function of "${toolset.name}"`,
    );
  }
  if (!names.includes(fn)) {
    const near = closestNames(fn, names);
    throw new AppError(
      "BAD_INPUT",
      `toolset "${toolset.name}" has no function "${fn}"${near.length ? `; did you mean ${near.map((n) => `"${n}"`).join(" or ")}?` : ""} (functions: ${names.join(", ")})`,
    );
  }
  return { binding: fn, args: rest };
}

/** Export name of the generated entry that `bindingInvocation` appends; `__toolstore` is reserved. */
const BINDING_ENTRY_EXPORT = "__toolstore_entry";
/** Names a toolset may not declare: the generated entry and the runtime use them. */
export const RESERVED_PREFIX = "__toolstore";

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/**
 * What to hand the sandbox pool to call one binding with an arguments object. The positional
 * mapping happens INSIDE the guest, in a generated entry appended to the module, because a JSON
 * array cannot carry `undefined`: `{ unit: "f" }` for `f(location?, unit?)` must arrive as
 * `f(undefined, "f")` so defaults apply, not as `f(null, "f")`.
 */
export function bindingInvocation(
  compiledJs: string,
  binding: Pick<ToolsetBinding, "name" | "params">,
  args: Record<string, unknown>,
): { code: string; exportName: string; args: unknown[] } {
  if (!IDENTIFIER.test(binding.name) || !binding.params.every((p) => IDENTIFIER.test(p))) {
    throw new AppError("INTERNAL", `binding ${binding.name} has a name that is not an identifier`);
  }
  const params = binding.params.map((p) => `a[${JSON.stringify(p)}]`).join(", ");
  const entry =
    `\nexport function ${BINDING_ENTRY_EXPORT}(a) {\n` +
    `  if (a === null || typeof a !== "object") a = {};\n` +
    `  return ${binding.name}(${params});\n}\n`;
  return { code: compiledJs + entry, exportName: BINDING_ENTRY_EXPORT, args: [args] };
}

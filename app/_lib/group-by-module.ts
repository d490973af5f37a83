/** Capabilities under their module, modules in the order they first appear. */
export function groupByModule<T extends { module: string }>(
  items: readonly T[],
): [module: string, items: T[]][] {
  const map = new Map<string, T[]>();
  for (const item of items) {
    const list = map.get(item.module);
    if (list) list.push(item);
    else map.set(item.module, [item]);
  }
  return [...map.entries()];
}

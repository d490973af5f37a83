/**
 * The built-in platform modules, composed from their ports. Each export declares its category;
 * builtin-categories.json is the reviewed snapshot (a test compares it).
 */
import type { AssetStore, ToolsetCatalog } from "../ports";
import type { CapabilityModule } from "../types";
import { createAssetsModule } from "./assets";
import { createHttpModule, type HttpModuleOptions } from "./http";
import { createStoreModule } from "./store";

export interface BuiltinModulesOptions {
  catalog: ToolsetCatalog;
  assets: AssetStore;
  http: HttpModuleOptions;
  maxImageBytes?: number;
}

export function createBuiltinModules(options: BuiltinModulesOptions): CapabilityModule[] {
  return [
    createStoreModule(options.catalog),
    createAssetsModule({
      store: options.assets,
      ...(options.maxImageBytes === undefined ? {} : { maxImageBytes: options.maxImageBytes }),
    }),
    createHttpModule(options.http),
  ];
}

/**
 * The built-in platform modules, composed from their ports. Each export declares its category;
 * builtin-categories.json is the reviewed snapshot (a test compares it).
 */
import type { AssetStore, ModuleFactory, ToolsetCatalog } from "../ports";
import type { CapabilityModule } from "../types";
import { createAssetsModule } from "./assets";
import { createHttpModule, type HttpModuleOptions } from "./http";
import { createRunModule } from "./run";
import { createStoreModule } from "./store";
import { createUiModule } from "./ui";

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
    createRunModule(),
    createUiModule(),
  ];
}

/** The built-ins as a module factory for createEngine (the composition root decides the options). */
export function builtinModules(
  options: { http?: HttpModuleOptions; maxImageBytes?: number } = {},
): ModuleFactory {
  return ({ catalog, assets }) =>
    createBuiltinModules({
      catalog,
      assets,
      http: options.http ?? { allowedHosts: [] },
      ...(options.maxImageBytes === undefined ? {} : { maxImageBytes: options.maxImageBytes }),
    });
}

/**
 * Library modules: pure functions over plain data, imported as `toolstore/lib/<name>`. They run
 * inside the action's own sandbox as a self-contained ES module, so they never see a run: no
 * gate, no capabilities, no secrets, no network, no host globals. Types only.
 */

/** The import specifier prefix of libraries beside capability modules: `toolstore/lib/<name>`. */
export const LIBRARY_PREFIX = "lib/";

export interface LibraryExport {
  /** The export name, an identifier. */
  name: string;
  description: string;
  /** TypeScript signature for the editor and the execute_code description: `parse(text: string): unknown`. */
  signature: string;
}

export interface LibraryModule {
  /** Name without prefix: `yaml` for `toolstore/lib/yaml`. */
  name: string;
  description: string;
  /** The package it is built on, for people: `yaml 2.9.1`. */
  builtOn: string;
  exports: LibraryExport[];
  /** More TypeScript declarations inside the module (types the signatures name). */
  declarations?: string;
  /**
   * The ES module the guest loads: self-contained (it imports nothing), exporting exactly
   * `exports`. Called when an action first imports it; the result may be cached.
   */
  source(): string;
}

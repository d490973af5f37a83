/**
 * One JSON Schema validator for every per-request MCP server. The SDK's Server builds a new Ajv
 * instance (formats included) in its constructor unless it is handed one, and this mount builds a
 * server per HTTP request: that cost about 1 ms of CPU per request. Validators are
 * compiled once per distinct schema; the set is bounded, and past it the Ajv instance is replaced
 * (Ajv keeps every schema it compiled), so memory stays flat whatever schemas clients bring.
 */
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import type {
  JsonSchemaType,
  JsonSchemaValidator,
  jsonSchemaValidator,
} from "@modelcontextprotocol/sdk/validation/types.js";

const MAX_SCHEMAS = 256;

export function createSharedSchemaValidator(): jsonSchemaValidator {
  let ajv = new AjvJsonSchemaValidator();
  let compiled = new Map<string, JsonSchemaValidator<unknown>>();
  return {
    getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
      const key = JSON.stringify(schema);
      let validator = compiled.get(key);
      if (!validator) {
        if (compiled.size >= MAX_SCHEMAS) {
          ajv = new AjvJsonSchemaValidator();
          compiled = new Map();
        }
        validator = ajv.getValidator<unknown>(schema);
        compiled.set(key, validator);
      }
      return validator as JsonSchemaValidator<T>;
    },
  };
}

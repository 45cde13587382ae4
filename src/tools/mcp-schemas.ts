// JSON Schema validation for MCP tool sources, as the SDK's default validator does it (formats checked, every error
// listed), but with patterns matched in linear time (src/domain/linear-regexp.ts): an MCP server's schemas may hold
// any pattern, and the strings they check are a model's arguments or the server's own results.
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation';
import { Ajv } from 'ajv';
import ajvFormats from 'ajv-formats';
import { linearPatterns } from '../domain/linear-regexp.js';

/** Validators of tool input schemas; getValidator throws for a schema that cannot be used. */
export function mcpSchemaValidator(): AjvJsonSchemaValidator {
  const ajv = new Ajv({
    strict: false,
    validateFormats: true,
    validateSchema: false,
    allErrors: true,
    code: linearPatterns(),
  });
  ajvFormats.default(ajv); // the CommonJS module's default export, as Node hands it over
  return new AjvJsonSchemaValidator(ajv);
}

/** A validator's error message as the model reads it: `invalid arguments: id must be string`. */
export function invalidArgumentsText(errorMessage: string): string {
  return `invalid arguments: ${errorMessage.replaceAll('data/', '').replaceAll('data ', 'arguments ')}`;
}

/**
 * The MCP client's validators of tool results (structuredContent against the tool's outputSchema). The client compiles
 * them when it lists the tools, and a schema that throws there fails the listing, losing every tool of the server;
 * so a tool whose output schema cannot be used has its results passed unchecked. Schema and result come from the
 * same server: the check guards nothing against it.
 */
export function mcpResultValidator(): jsonSchemaValidator {
  const validators = mcpSchemaValidator();
  return {
    getValidator(schema) {
      try {
        return validators.getValidator(schema);
      } catch {
        return (input) => ({ valid: true, data: input as never, errorMessage: undefined });
      }
    },
  };
}

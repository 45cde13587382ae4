// What `toolgate init` writes: the built-in demo as a config file (test/cli/init.test.ts checks that it parses to
// exactly the demo), with the other sections explained and commented out. JSON with comments: src/config/jsonc.ts.
export const STARTER_CONFIG = `// toolgate config. Start the server on it:   TOOLGATE_CONFIG=toolgate.jsonc npx toolgate
// As written this is the built-in demo: an offline scripted model and three demo tools, with confirmation on, and a
// gateway on the same tools for MCP clients.
// Every field: docs/reference/config.md in the package (node_modules/toolgate/), whose README.md#documentation lists
// all its docs. Editors complete and check the fields with the JSON Schema below.
// Comments and trailing commas are allowed. A value "env:NAME" is read from the environment variable NAME at start.
{
  "$schema": "./node_modules/toolgate/schema/toolgate.config.schema.json",

  // Models by id. "scripted" is offline and deterministic; any Chat Completions server with tool calls works:
  "models": {
    "demo": { "provider": "scripted" },
    // "main": { "provider": "openai-compatible", "baseURL": "https://api.openai.com/v1", "model": "gpt-4o-mini",
    //           "apiKey": "env:OPENAI_API_KEY" },
    // "local": { "provider": "openai-compatible", "baseURL": "http://127.0.0.1:11434/v1", "model": "llama3.1" },
  },

  // Where tools come from: "builtin" (the demo's entity store), MCP servers over stdio or Streamable HTTP.
  // A tool's id is "<source>:<name>".
  "toolSources": {
    "demo": { "type": "builtin" },
    // "memory": { "type": "mcp", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"] },
    // "remote": { "type": "mcp", "url": "https://mcp.example.com/mcp", "headers": { "authorization": "env:REMOTE_AUTH" } },
  },

  "agents": [
    {
      "id": "demo",
      "name": "Demo agent",
      "description": "Lists, creates and deletes entities in a small demo store; asks before it changes anything.",
      "model": "demo",
      "systemPrompt": "You manage a small store of entities. Use the tools to list, create and delete them.",
      "tools": ["demo:*"],
      // Ask a human before a tool runs; only tools annotated readOnlyHint: true run unasked.
      "requireToolConfirmation": true,
      // Per tool: "ALWAYS", "NEVER", or rules on the arguments (docs/argument-rules.md).
      "toolConfirmation": {},
      // How long a paused turn stays answerable.
      "pauseTtlSeconds": 3600,
      "maxIterations": 10,
    },
    // An agent without "model" is an MCP gateway: MCP clients (Claude Code, Cursor, …) call its tools at /mcp,
    // and every call passes the same confirmation.
    {
      "id": "gateway",
      "name": "Demo gateway",
      "description": "Serves the demo tools to MCP clients at /mcp; asks before a call changes anything.",
      "systemPrompt": "",
      "tools": ["demo:*"],
      "requireToolConfirmation": true,
      "toolConfirmation": {},
      "pauseTtlSeconds": 3600,
      "maxIterations": 10,
    },
  ],

  // Without "auth" there is one admin user, "local", and the server listens on loopback only (HOST=127.0.0.1).
  // With tokens it may listen anywhere; each request sends "Authorization: Bearer <token>".
  // "auth": { "tokens": [{ "token": "env:TOOLGATE_ADMIN_TOKEN", "user": "admin", "admin": true }] },
  // Or your identity provider's access tokens, roles from its groups (docs/identity.md):
  // "auth": { "oidc": { "issuer": "https://login.example.com/realms/corp", "adminRoles": ["admin"] } },
  // "server": { "publicUrl": "https://toolgate.example.com" },

  // State: SQLite at ./data/toolgate.db unless TOOLGATE_DB or this says otherwise. Several instances share one
  // PostgreSQL database and one Redis (docs/multi-instance.md):
  // "database": { "url": "postgres://toolgate@127.0.0.1:5432/toolgate" },
  // "pubsub": { "redis": "redis://127.0.0.1:6379" },
}
`;

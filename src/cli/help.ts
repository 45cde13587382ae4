// `toolgate --help` and `--version`: what the command does, its commands and the environment it reads.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../package-root.js';
import { DEFAULT_CONFIG_FILE } from './init.js';

export function version(): string {
  return (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}

export function helpText(): string {
  return `toolgate ${version()}: a GraphQL server that runs AI agents and asks a human before their tools run.

Usage:
  toolgate                start the server: the built-in demo (no setup), or the config TOOLGATE_CONFIG names;
                          GraphQL at /graphql, the approval inbox at /inbox, MCP clients at /mcp
  toolgate init [file]    write a commented starter config (default ${DEFAULT_CONFIG_FILE}); never overwrites a file
  toolgate mcp            bridge an MCP client on stdio to a running toolgate's /mcp
  toolgate audit export [--from <time>] [--to <time>]
                          the decision records of TOOLGATE_DB (or the config's database) as JSON Lines
  toolgate audit verify <file> --keys <jwks>
                          check exported records offline: chain, signatures, each run bound to one accept
  toolgate --help         this text
  toolgate --version      the version

Environment of the server (a variable set but empty counts as unset):
  HOST              listen address (default 127.0.0.1); any other needs an "auth" section in the config
  PORT              listen port (default 4000)
  TOOLGATE_CONFIG   the config file (JSON; comments and trailing commas allowed); default: the built-in demo
  TOOLGATE_DB       an SQLite file (default ./data/toolgate.db, ":memory:" allowed) or a postgres:// URL
  TOOLGATE_REDIS    a redis:// URL: live events between instances on one PostgreSQL database
  LOG_LEVEL         trace, debug, info (default), warn, error, fatal or silent

Environment of toolgate mcp:
  TOOLGATE_URL      the server's MCP endpoint (default http://127.0.0.1:4000/mcp)
  TOOLGATE_TOKEN    a bearer token, when the server's config has an "auth" section

SIGTERM or SIGINT stops the server cleanly: paused turns wait in the database for the next start.

The docs come with the package, in ${packageRoot()}: README.md#documentation lists them;
the config file is docs/config.md#the-config-file, every field docs/reference/config.md.
`;
}

export function unknownCommand(command: string): string {
  return `toolgate: unknown command "${command}" (toolgate --help lists the commands)`;
}

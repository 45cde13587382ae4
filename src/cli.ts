#!/usr/bin/env node
// The `toolgate` command (package.json `bin`; `npm start` and `npm run mcp` run it from the sources). Each command's
// module is loaded only when it runs: `toolgate --help` and `toolgate init` answer without loading the server.
import './node-env.js'; // first: modules are evaluated in import order, and the server's read NODE_ENV
import { helpText, unknownCommand, version } from './cli/help.js';

/** Runs the command the arguments name; the process exits once it and what it started are done. */
async function run(command: string | undefined, args: string[]): Promise<void> {
  switch (command) {
    case undefined:
      (await import('./cli/serve.js')).serve();
      break;
    case 'mcp':
      (await import('./cli/mcp.js')).mcpBridge();
      break;
    case 'init':
      process.exitCode = (await import('./cli/init.js')).init(args);
      break;
    case 'audit':
      process.exitCode = await (await import('./cli/audit.js')).audit(args);
      break;
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(helpText());
      break;
    case '--version':
    case '-v':
      process.stdout.write(`${version()}\n`);
      break;
    default:
      console.error(unknownCommand(command));
      process.exitCode = 2;
  }
}

// Not awaited at the top level, so that the module also runs where top-level await cannot (the test suite's
// CommonJS bundle); a failure is still an unhandled rejection: its stack on stderr, exit code 1.
const [command, ...args] = process.argv.slice(2);
void run(command, args);

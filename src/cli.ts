#!/usr/bin/env node
// The `toolgate` command (package.json `bin`; `npm start` and `npm run mcp` run it from the sources). Each command's
// module is loaded only when it runs: `toolgate --help` and `toolgate init` answer without loading the server.
import './node-env.js'; // first: modules are evaluated in import order, and the server's read NODE_ENV
import { helpText, unknownCommand, version } from './cli/help.js';

const [command, ...args] = process.argv.slice(2);
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

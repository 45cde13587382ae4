// `toolgate init [file]`: writes the commented starter config (./starter-config.ts). An existing file is never
// overwritten: the write fails if the name is taken, checked and created in one step.
import { writeFileSync } from 'node:fs';
import { STARTER_CONFIG } from './starter-config.js';

export const DEFAULT_CONFIG_FILE = 'toolgate.jsonc';

/** The exit status: 0 written, 1 refused (one line on stderr), 2 a wrong use of the command. */
export function init(args: string[]): number {
  if (args.length > 1 || args[0]?.startsWith('-')) {
    console.error('toolgate init: usage: toolgate init [file]');
    return 2;
  }
  const file = args[0] ?? DEFAULT_CONFIG_FILE;
  try {
    writeFileSync(file, STARTER_CONFIG, { flag: 'wx' });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    console.error(
      code === 'EEXIST'
        ? `toolgate init: ${file} already exists; it is left as it is (name another file: toolgate init <file>)`
        : `toolgate init: cannot write ${file} (${code ?? String(error)})`,
    );
    return 1;
  }
  console.log(`wrote ${file}: the built-in demo, with the other sections explained and commented out
start the server on it: TOOLGATE_CONFIG=${file} npx toolgate`);
  return 0;
}

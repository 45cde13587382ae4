import { dirname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ToolgatePlugin, ToolPreExecuteListener } from '../domain/gate/listeners.js';
import { ConfigError } from './load.js';

/** Loads plugin modules named in the config, relative to the config file; each default-exports a ToolgatePlugin. */
export async function loadPlugins(paths: string[], configFile: string | null): Promise<ToolPreExecuteListener[]> {
  const base = configFile ? dirname(configFile) : process.cwd();
  const listeners: ToolPreExecuteListener[] = [];
  for (const [i, path] of paths.entries()) {
    const where = `${configFile ?? '<config>'}: plugins[${i}]`;
    const file = resolve(base, path);
    let module: { default?: unknown };
    try {
      module = await import(pathToFileURL(file).href);
    } catch (error) {
      throw new ConfigError(`${where}: cannot load ${file}: ${(error as Error).message}`);
    }
    const plugin = module.default as Partial<ToolgatePlugin> | undefined;
    if (!plugin || typeof plugin.name !== 'string' || !Array.isArray(plugin.listeners)) {
      throw new ConfigError(`${where}: ${file} must default-export { name, listeners: [...] }`);
    }
    plugin.listeners.forEach((listener, j) => {
      if (typeof listener?.onToolPreExecute !== 'function') {
        throw new ConfigError(`${where}: ${file}: listeners[${j}] has no onToolPreExecute function`);
      }
      if (listener.priority !== undefined && typeof listener.priority !== 'number') {
        throw new ConfigError(`${where}: ${file}: listeners[${j}].priority must be a number`);
      }
    });
    listeners.push(...plugin.listeners);
  }
  return listeners;
}

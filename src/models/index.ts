import { ConfigError } from '../config/load.js';
import type { ModelConfig } from '../config/schema.js';
import type { Model } from './model.js';
import { OpenAiCompatibleModel } from './openai-compatible.js';
import { ScriptedModel } from './scripted.js';

/** Builds the model a config entry describes. `where` names the entry in error messages. */
export function createModel(config: ModelConfig, where: string): Model {
  switch (config.provider) {
    case 'scripted':
      return new ScriptedModel(undefined, { recordRequests: false });
    case 'openai-compatible':
      return new OpenAiCompatibleModel(config, where);
    default:
      throw new ConfigError(
        `${where}.provider: the provider "${(config as { provider: string }).provider}" is not available in this build`,
      );
  }
}

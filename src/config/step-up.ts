// Which calls need the approver's passkey (docs/receipts.md#passkey-step-up): an agent's stepUp, or a tool's own
// under toolConfirmation, which wins ("none" exempts a tool of an agent that requires it).
import type { ToolgateConfig } from './schema.js';

/** Whether an ACCEPT of `agentId`'s call of `toolId` needs a passkey assertion. */
export function stepUpFromConfig(config: Pick<ToolgateConfig, 'agents'>): (agentId: string, toolId: string) => boolean {
  const byAgent = new Map(
    config.agents.map((agent) => {
      const tools = new Map<string, boolean>();
      for (const [toolId, value] of Object.entries(agent.toolConfirmation)) {
        if (typeof value !== 'string' && value.stepUp !== undefined) tools.set(toolId, value.stepUp === 'passkey');
      }
      return [agent.id, { all: agent.stepUp === 'passkey', tools }] as const;
    }),
  );
  return (agentId, toolId) => {
    const agent = byAgent.get(agentId);
    return agent ? (agent.tools.get(toolId) ?? agent.all) : false;
  };
}

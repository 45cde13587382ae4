import { describe, expect, it } from 'vitest';
import { InvalidElicitationRequestError } from '../../src/agent/elicitation-request.js';
import {
  ListenerRegistry,
  type ToolPreExecuteEvent,
  type ToolPreExecuteListener,
} from '../../src/domain/gate/listeners.js';
import { preExecute } from '../../src/agent/pre-execute.js';
import type { Tool } from '../../src/tools/tool.js';
import { agent, tool as definition, toolCall } from '../support/definitions.js';

const tool: Tool = { ...definition('x'), execute: () => Promise.resolve({ text: 'ran', isError: false }) };
const site = { agent: agent(), threadId: 'thr_1', turnId: 'trn_1' };
const request = { message: 'Allow x?', requestedSchema: { type: 'object', properties: {} }, _meta: {} };

const listening = (...listeners: ToolPreExecuteListener['onToolPreExecute'][]) =>
  new ListenerRegistry(listeners.map((onToolPreExecute) => ({ onToolPreExecute })));

describe('preExecute', () => {
  it('runs a call no listener objects to', async () => {
    expect(
      await preExecute(
        listening(() => {}),
        site,
        tool,
        toolCall('x'),
      ),
    ).toEqual({ kind: 'run' });
  });

  it("gives the listeners the call's place, the trusted definition and the call, as copies", async () => {
    const call = toolCall('x', { id: 7 });
    let seen: ToolPreExecuteEvent | undefined;
    await preExecute(
      listening((event) => {
        seen = event;
        (event.toolCall.arguments as { id: number }).id = 8;
      }),
      site,
      tool,
      call,
    );
    expect(seen).toMatchObject({ threadId: 'thr_1', turnId: 'trn_1', tool: definition('x') });
    expect(seen!.agent.id).toBe('a');
    expect('execute' in seen!.tool).toBe(false);
    expect(call.arguments).toEqual({ id: 7 });
  });

  it('asks with the checked request, and says whether a remembered approval may stand in', async () => {
    const verdict = await preExecute(
      listening((event) => event.setElicitationRequest(request, { grantable: true })),
      site,
      tool,
      toolCall('x', { id: 7 }),
    );
    expect(verdict).toMatchObject({ kind: 'ask', grantable: true, request: { message: 'Allow x?' } });
    expect(verdict.kind === 'ask' && verdict.request._meta).toHaveProperty(['toolgate.dev/tool_call', 'arguments'], {
      id: 7,
    });
  });

  it('lets a veto beat a request to ask, whichever listener set them', async () => {
    const verdict = await preExecute(
      listening(
        (event) => event.setVeto('protected'),
        (event) => event.setElicitationRequest(request),
      ),
      site,
      tool,
      toolCall('x'),
    );
    expect(verdict).toEqual({ kind: 'vetoed', reason: 'protected' });
  });

  it('throws for a request that is not an MCP form elicitation', async () => {
    const broken = listening((event) => event.setElicitationRequest({ message: 'no schema' } as never));
    await expect(preExecute(broken, site, tool, toolCall('x'))).rejects.toBeInstanceOf(InvalidElicitationRequestError);
  });

  it('once confirmed, runs what a listener would ask about, without reading its request; a veto still wins', async () => {
    const asks = listening((event) => event.setElicitationRequest({ message: 'no schema' } as never));
    expect(await preExecute(asks, site, tool, toolCall('x'), { confirmed: true })).toEqual({ kind: 'run' });
    const vetoes = listening((event) => event.setVeto('not these arguments'));
    expect(await preExecute(vetoes, site, tool, toolCall('x'), { confirmed: true })).toEqual({
      kind: 'vetoed',
      reason: 'not these arguments',
    });
  });
});

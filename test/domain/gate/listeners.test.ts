import { describe, expect, it } from 'vitest';
import {
  ListenerRegistry,
  ToolPreExecuteEvent,
  type ToolPreExecuteListener,
} from '../../../src/domain/gate/listeners.js';
import { agent, tool, toolCall } from '../../support/definitions.js';

const newEvent = () => new ToolPreExecuteEvent(agent(), 'thr_1', 'trn_1', tool('x'), toolCall('x', { id: 7 }));

describe('ToolPreExecuteEvent', () => {
  it('starts neither vetoed nor asking', () => {
    const e = newEvent();
    expect(e.isVetoed()).toBe(false);
    expect(e.getVetoReason()).toBeNull();
    expect(e.getElicitationRequest()).toBeNull();
  });

  it('carries the agent, ids, trusted tool and call', () => {
    const e = newEvent();
    expect(e.agent.id).toBe('a');
    expect(e.threadId).toBe('thr_1');
    expect(e.turnId).toBe('trn_1');
    expect(e.tool.id).toBe('s:x');
    expect(e.toolCall).toEqual({ id: 'call_x', name: 'x', toolId: 's:x', arguments: { id: 7 } });
  });

  it('records a veto and its reason', () => {
    const e = newEvent();
    e.setVeto('not today');
    expect(e.isVetoed()).toBe(true);
    expect(e.getVetoReason()).toBe('not today');
  });

  it('records and clears an elicitation request', () => {
    const e = newEvent();
    const request = { message: 'm', requestedSchema: { type: 'object', properties: {} }, _meta: {} };
    e.setElicitationRequest(request);
    expect(e.getElicitationRequest()).toBe(request);
    e.setElicitationRequest(null);
    expect(e.getElicitationRequest()).toBeNull();
  });
});

describe('ListenerRegistry', () => {
  const recorder = (order: string[], name: string, priority?: number): ToolPreExecuteListener => ({
    ...(priority !== undefined && { priority }),
    onToolPreExecute: () => {
      order.push(name);
    },
  });

  it('runs listeners by descending priority; equal priorities (and no priority = 0) keep registration order', async () => {
    const order: string[] = [];
    const registry = new ListenerRegistry([
      recorder(order, 'low', -10),
      recorder(order, 'zero-a', 0),
      recorder(order, 'high', 100),
      recorder(order, 'default'),
      recorder(order, 'mid', 50),
      recorder(order, 'zero-b', 0),
    ]);
    await registry.dispatch(newEvent());
    expect(order).toEqual(['high', 'mid', 'zero-a', 'default', 'zero-b', 'low']);
  });

  it('awaits each listener before the next', async () => {
    const order: string[] = [];
    const registry = new ListenerRegistry([
      {
        priority: 2,
        async onToolPreExecute() {
          await new Promise((r) => setTimeout(r, 10));
          order.push('slow first');
        },
      },
      {
        priority: 1,
        onToolPreExecute() {
          order.push('second');
        },
      },
    ]);
    await registry.dispatch(newEvent());
    expect(order).toEqual(['slow first', 'second']);
  });

  it('lets a later listener see what an earlier one decided', async () => {
    let seen: string | null = null;
    const registry = new ListenerRegistry([
      {
        priority: 0,
        onToolPreExecute(e) {
          seen = e.getVetoReason();
        },
      },
      {
        priority: 9,
        onToolPreExecute(e) {
          e.setVeto('first');
        },
      },
    ]);
    await registry.dispatch(newEvent());
    expect(seen).toBe('first');
  });
});

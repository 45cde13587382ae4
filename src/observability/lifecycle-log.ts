// One log line per lifecycle event (src/agent/lifecycle.ts): ids, statuses, outcomes and durations. Never a tool
// call's arguments, a message's text or an answer's content, at any level: they are what users and models wrote.
// The one text is a failed turn's `error`, which toolgate writes itself (src/domain/gate/messages.ts).
import type { Logger } from 'pino';
import type { LifecycleEvent, LifecycleObserver } from '../agent/lifecycle.js';
import { roundMs } from './logger.js';

export function lifecycleLogger(logger: Logger): LifecycleObserver {
  return {
    onLifecycle(event: LifecycleEvent) {
      switch (event.type) {
        case 'turnStarted': {
          const { turn } = event;
          logger.info(
            { event: event.type, turnId: turn.id, threadId: turn.threadId, agentId: turn.agentId },
            'turn started',
          );
          return;
        }
        case 'turnPaused': {
          const { turn, elicitations } = event;
          logger.info(
            {
              event: event.type,
              turnId: turn.id,
              elicitationIds: elicitations.map((e) => e.id),
              count: elicitations.length,
              expiresAt: turn.expiresAt,
            },
            'turn paused for confirmation',
          );
          return;
        }
        case 'turnEnded': {
          const { turn } = event;
          logger.info(
            {
              event: event.type,
              turnId: turn.id,
              status: turn.status,
              iterations: turn.iterations,
              ...(turn.error === null ? {} : { error: turn.error }),
            },
            'turn ended',
          );
          return;
        }
        case 'elicitationAnswered': {
          const { elicitation } = event;
          logger.info(
            {
              event: event.type,
              elicitationId: elicitation.id,
              turnId: elicitation.turnId,
              action: event.action,
              waitedMs: event.waitedMs,
            },
            'elicitation answered',
          );
          return;
        }
        case 'elicitationsExpired':
          logger.info({ event: event.type, turnId: event.turn.id, count: event.count }, 'elicitations expired');
          return;
        case 'toolStarted':
          logger.info(
            {
              event: event.type,
              turnId: event.turn.id,
              toolCallId: event.toolCall.id,
              toolId: event.toolCall.toolId,
              ...(event.grantId && { grantId: event.grantId }),
              ...(event.edited && { edited: true }),
            },
            'tool started',
          );
          return;
        case 'toolFinished':
          logger.info(
            {
              event: event.type,
              turnId: event.turn.id,
              toolCallId: event.toolCall.id,
              toolId: event.toolCall.toolId,
              outcome: event.outcome,
              durationMs: roundMs(event.durationMs),
            },
            'tool finished',
          );
          return;
        case 'toolRefused':
          logger.error(
            {
              event: event.type,
              turnId: event.turn.id,
              toolCallId: event.toolCall.id,
              toolId: event.toolCall.toolId,
              problem: event.problem,
            },
            'tool refused: its accepting decision record does not verify',
          );
          return;
        case 'modelCalled':
          logger.debug(
            {
              event: event.type,
              turnId: event.turn.id,
              modelId: event.modelId,
              outcome: event.outcome,
              durationMs: roundMs(event.durationMs),
            },
            'model called',
          );
          return;
      }
    },
  };
}

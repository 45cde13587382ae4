// The viewer's remembered approvals (docs/approvals.md), what each let run, and whether each holds now.
import { definitionHash, grantStateAt } from '../domain/grants.js';
import type { Agent, ApprovalGrantRecord, GrantUseRecord, Page } from '../domain/records.js';
import type { AppDeps } from './deps.js';
import { pageSize, type PageRequest } from './reads.js';
import type { Viewer } from './viewer.js';

/** ACTIVE, or why the grant no longer lets calls run unasked. */
export type ApprovalGrantState = 'ACTIVE' | 'TOOL_CHANGED' | 'EXPIRED' | 'REVOKED';

export function getGrant(app: AppDeps, viewer: Viewer, id: string): Promise<ApprovalGrantRecord | null> {
  return app.store.getApprovalGrant(id, viewer.id);
}

/**
 * Oldest first: those not revoked and not expired, or with `includeInactive` all; optionally of one agent, or the
 * THREAD-scoped ones of one thread. 50 by default, at most 200.
 */
export function listGrants(
  app: AppDeps,
  viewer: Viewer,
  request: PageRequest & { agentId: string | null; threadId: string | null; includeInactive: boolean },
): Promise<Page<ApprovalGrantRecord>> {
  return app.store.listApprovalGrants(
    viewer.id,
    { agentId: request.agentId, threadId: request.threadId, activeOnly: !request.includeInactive },
    app.clock().toISOString(),
    pageSize(request.first, 50, 200),
    request.after ?? null,
  );
}

/** Every call the grant let run unasked, oldest first (the grant was read as the viewer's). */
export function grantUses(app: AppDeps, grant: ApprovalGrantRecord): Promise<GrantUseRecord[]> {
  return app.store.listGrantUses([grant.id]);
}

/**
 * As of now. An unexpired, unrevoked grant holds only while its tool is still the agent's with the definition it
 * was granted for; `agentOf` reads the agent (batched by the caller).
 */
export async function grantState(
  app: AppDeps,
  grant: ApprovalGrantRecord,
  agentOf: (id: string) => Promise<Agent | null>,
): Promise<ApprovalGrantState> {
  const state = grantStateAt(grant, app.clock().toISOString());
  if (state !== 'ACTIVE') return state;
  const agent = await agentOf(grant.agentId);
  const tool = agent && (await app.tools.toolOf(agent, grant.toolId));
  return tool && definitionHash(tool) === grant.definitionHash ? 'ACTIVE' : 'TOOL_CHANGED';
}

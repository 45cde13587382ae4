// Revoke one of the viewer's remembered approvals: from its commit on, the calls it covered ask again, and a call it
// let through that has not started does not run (src/domain/grants.ts). Revoking again returns it as first revoked.
import type { ApprovalGrantRecord } from '../domain/records.js';
import type { NotFound } from '../domain/refusals.js';
import type { AppDeps } from './deps.js';
import { type Outcome } from './outcome.js';
import type { Viewer } from './viewer.js';

export type RevokeGrantRefusal = NotFound<'grant'> & { field: 'grantId' };

export type RevokeGrantOutcome = Outcome<{ grant: ApprovalGrantRecord }, RevokeGrantRefusal>;

export async function revokeGrant(
  app: AppDeps,
  viewer: Viewer,
  input: { grantId: string },
): Promise<RevokeGrantOutcome> {
  // Another user's grant reads as absent.
  const grant = await app.store.revokeApprovalGrant(input.grantId, viewer.id, app.clock().toISOString());
  if (!grant) return { ok: false, code: 'NOT_FOUND', of: 'grant', field: 'grantId' };
  return { ok: true, grant };
}

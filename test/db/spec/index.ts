// The Store contract (src/domain/store.ts) as one suite that any implementation runs, after LangGraph JS's
// libs/checkpoint-validation: a backend's test files call describeStore, one part each, with a factory that opens a
// fresh, migrated, empty database per test, and each file here registers the cases of one of the Store's roles,
// written with the test functions storeSpec builds on it (./harness.ts).
import { describe } from 'vitest';
import { registerAgentsSpec } from './agents.js';
import { registerApproversSpec } from './approvers.js';
import { registerAnswersSpec } from './answers.js';
import { registerConcurrencySpec } from './concurrency.js';
import { registerEscalationSpec } from './escalation.js';
import { registerGatewaySpec } from './gateway.js';
import { registerGrantsSpec } from './grants.js';
import { storeSpec, type StoreFactory, type StoreSpec } from './harness.js';
import { registerIdempotencySpec } from './idempotency.js';
import { registerLifecycleSpec } from './lifecycle.js';
import { registerMaintenanceSpec } from './maintenance.js';
import { registerPasskeysSpec } from './passkeys.js';
import { registerReadsSpec } from './reads.js';
import { registerTurnLogSpec } from './turn-log.js';
import { registerWebhooksSpec } from './webhooks.js';

export type { StoreFactory, StoreOptions, StoreUnderTest } from './harness.js';

/**
 * The contract's cases in three parts of about equal length, a test file each per backend
 * (`<backend>-store.<part>.spec.test.ts`): vitest starts small files last, and the whole contract on PostgreSQL, one
 * file, then ran alone at the end of a full run while the other forks had finished.
 */
const PARTS = {
  'agents and the turn log': [registerAgentsSpec, registerTurnLogSpec],
  'turns, answers and races': [
    registerIdempotencySpec,
    registerReadsSpec,
    registerAnswersSpec,
    registerMaintenanceSpec,
    registerLifecycleSpec,
    registerGrantsSpec,
    registerConcurrencySpec,
  ],
  'approvers, the outbox and the gateway': [
    registerWebhooksSpec,
    registerGatewaySpec,
    registerApproversSpec,
    registerEscalationSpec,
    registerPasskeysSpec,
  ],
} satisfies Record<string, ((spec: StoreSpec) => void)[]>;

export type StoreSpecPart = keyof typeof PARTS;

export function describeStore(factory: StoreFactory, part: StoreSpecPart): void {
  describe(`Store contract: ${factory.name}: ${part}`, () => {
    const spec = storeSpec(factory);
    for (const register of PARTS[part]) register(spec);
  });
}

// The Store contract (src/domain/store.ts) as one suite that any implementation runs, after LangGraph JS's
// libs/checkpoint-validation: a backend's test file calls describeStore with a factory that opens a fresh, migrated,
// empty database per test, and each file here registers the cases of one of the Store's roles, written with the test
// functions storeSpec builds on it (./harness.ts).
import { describe } from 'vitest';
import { registerAgentsSpec } from './agents.js';
import { registerApproversSpec } from './approvers.js';
import { registerAnswersSpec } from './answers.js';
import { registerConcurrencySpec } from './concurrency.js';
import { registerEscalationSpec } from './escalation.js';
import { registerGatewaySpec } from './gateway.js';
import { registerGrantsSpec } from './grants.js';
import { storeSpec, type StoreFactory } from './harness.js';
import { registerIdempotencySpec } from './idempotency.js';
import { registerLifecycleSpec } from './lifecycle.js';
import { registerMaintenanceSpec } from './maintenance.js';
import { registerPasskeysSpec } from './passkeys.js';
import { registerReadsSpec } from './reads.js';
import { registerTurnLogSpec } from './turn-log.js';
import { registerWebhooksSpec } from './webhooks.js';

export type { StoreFactory, StoreOptions, StoreUnderTest } from './harness.js';

export function describeStore(factory: StoreFactory): void {
  describe(`Store contract: ${factory.name}`, () => {
    const spec = storeSpec(factory);
    registerAgentsSpec(spec);
    registerTurnLogSpec(spec);
    registerIdempotencySpec(spec);
    registerReadsSpec(spec);
    registerAnswersSpec(spec);
    registerMaintenanceSpec(spec);
    registerLifecycleSpec(spec);
    registerGrantsSpec(spec);
    registerConcurrencySpec(spec);
    registerWebhooksSpec(spec);
    registerGatewaySpec(spec);
    registerApproversSpec(spec);
    registerEscalationSpec(spec);
    registerPasskeysSpec(spec);
  });
}

// The Store contract on the PostgreSQL store: approvers, the outbox and the gateway (test/db/spec/).
import { postgresStoreFactory } from './store-factories.js';
import { describeStore } from './spec/index.js';

describeStore(postgresStoreFactory, 'approvers, the outbox and the gateway');

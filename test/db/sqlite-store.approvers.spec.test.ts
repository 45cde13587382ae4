// The Store contract on the SQLite store: approvers, the outbox and the gateway (test/db/spec/).
import { sqliteStoreFactory } from './store-factories.js';
import { describeStore } from './spec/index.js';

describeStore(sqliteStoreFactory, 'approvers, the outbox and the gateway');

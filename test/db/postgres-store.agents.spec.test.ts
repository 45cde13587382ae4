// The Store contract on the PostgreSQL store: agents and the turn log (test/db/spec/).
import { postgresStoreFactory } from './store-factories.js';
import { describeStore } from './spec/index.js';

describeStore(postgresStoreFactory, 'agents and the turn log');

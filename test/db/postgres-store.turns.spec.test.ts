// The Store contract on the PostgreSQL store: turns, answers and races (test/db/spec/).
import { postgresStoreFactory } from './store-factories.js';
import { describeStore } from './spec/index.js';

describeStore(postgresStoreFactory, 'turns, answers and races');

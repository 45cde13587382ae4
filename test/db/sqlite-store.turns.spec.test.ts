// The Store contract on the SQLite store: turns, answers and races (test/db/spec/).
import { sqliteStoreFactory } from './store-factories.js';
import { describeStore } from './spec/index.js';

describeStore(sqliteStoreFactory, 'turns, answers and races');

// The Store contract on the SQLite store: agents and the turn log (test/db/spec/).
import { sqliteStoreFactory } from './store-factories.js';
import { describeStore } from './spec/index.js';

describeStore(sqliteStoreFactory, 'agents and the turn log');

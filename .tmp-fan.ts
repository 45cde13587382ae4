import { startHarness, dataOf, START_TURN } from './test/support/harness.js';
const h = await startHarness();
let threadId: string | null = null;
for (let i = 0; i < 30; i++) threadId = dataOf(await h.gql(START_TURN, { input: { agentId: 'demo', message: 'list entities', threadId } })).startTurn.thread.id;
for (let k = 0; k < 3; k++) {
  const t = performance.now();
  const r = await h.gql('query($id: ID!) { thread(id: $id) { turns { thread { turns { thread { turns { messages { id } } } } } } } }', { id: threadId });
  console.log(Math.round(performance.now() - t), 'ms', JSON.stringify(r.errors?.[0]?.extensions));
}
await h.close();

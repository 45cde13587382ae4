// What an MCP request that wrote tells its client goes out once that is on disk, as a GraphQL mutation's response
// does (src/http/durable-responses.ts): a confirmation asked, a result, a task started or cancelled is never taken
// back by a power cut. Reads do not wait, as GraphQL queries do not.

/** `answer`, once every commit made before it settled is durable (`flush`: the store's). */
export async function onDisk<T>(session: { flush: () => Promise<void> }, answer: Promise<T>): Promise<T> {
  const value = await answer;
  await session.flush();
  return value;
}

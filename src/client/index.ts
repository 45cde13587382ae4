// `toolgate/client`: the GraphQL operations a frontend of its own needs (src/client/operations.graphql) as typed
// documents, with their result and variable types and the schema's enums and inputs they use (docs/client.md).
// Each document is a graphql-js DocumentNode typed as a TypedDocumentNode, so urql, Apollo Client, graphql-request
// and graphql-ws infer its result and variables; with plain fetch, send `print(document)` from graphql. Nothing here
// runs at import beyond the documents' literals: no client library, no dependency at run time.
export type { ResultOf, TypedDocumentNode, VariablesOf } from '@graphql-typed-document-node/core';
export * from './generated.js';

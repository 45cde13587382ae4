/* eslint-disable */
import * as types from './graphql';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "\n  query Viewer {\n    viewer {\n      id\n      isAdmin\n    }\n  }\n": typeof types.ViewerDocument,
    "\n  fragment ElicitationCard on Elicitation {\n    id\n    status\n    resolution\n    message\n    requestedSchema\n    createdAt\n    expiresAt\n    canEdit\n    canRemember\n    resolvedBy\n    resolvedAt\n    toolCall {\n      toolId\n      name\n      arguments\n      annotations {\n        title\n        readOnlyHint\n        destructiveHint\n        idempotentHint\n        openWorldHint\n      }\n    }\n    response {\n      action\n      content\n      arguments\n      remember {\n        scope\n        ttlSeconds\n      }\n    }\n    turn {\n      id\n      userMessage {\n        text\n      }\n      thread {\n        id\n        agent {\n          id\n          name\n          tools {\n            toolId\n            label\n          }\n        }\n      }\n    }\n  }\n": typeof types.ElicitationCardFragmentDoc,
    "\n  fragment TurnView on Turn {\n    id\n    status\n    text\n    error\n    iterations\n    expiresAt\n    updatedAt\n    messages {\n      id\n      role\n      text\n      toolCallId\n      toolCalls {\n        id\n        name\n        toolId\n        arguments\n      }\n    }\n    elicitations {\n      id\n      status\n      resolvedBy\n      response {\n        action\n        arguments\n      }\n    }\n  }\n": typeof types.TurnViewFragmentDoc,
    "\n  subscription InboxPending {\n    elicitationRequested(includePending: true) {\n      ...ElicitationCard\n    }\n  }\n": typeof types.InboxPendingDocument,
    "\n  subscription TurnLive($turnId: ID!) {\n    turnEvents(turnId: $turnId) {\n      __typename\n      ... on Turn {\n        ...TurnView\n      }\n      ... on TurnTextDelta {\n        turnId\n        iteration\n        index\n        offset\n        delta\n      }\n    }\n  }\n": typeof types.TurnLiveDocument,
    "\n  mutation Answer($input: ResolveElicitationInput!) {\n    resolveElicitation(input: $input) {\n      elicitation {\n        ...ElicitationCard\n      }\n      turn {\n        ...TurnView\n      }\n      userErrors {\n        code\n        message\n        field\n      }\n    }\n  }\n": typeof types.AnswerDocument,
    "\n  query History($after: String, $status: [ElicitationStatus!]) {\n    elicitations(first: 50, after: $after, status: $status, newestFirst: true) {\n      totalCount\n      pageInfo {\n        endCursor\n        hasNextPage\n      }\n      edges {\n        node {\n          ...ElicitationCard\n        }\n      }\n    }\n  }\n": typeof types.HistoryDocument,
    "\n  query Threads {\n    threads(first: 50, newestFirst: true) {\n      edges {\n        node {\n          id\n          createdAt\n          agent {\n            id\n            name\n          }\n          turns {\n            id\n            status\n            updatedAt\n          }\n          messages {\n            id\n            role\n            text\n          }\n        }\n      }\n    }\n  }\n": typeof types.ThreadsDocument,
    "\n  query Thread($id: ID!) {\n    thread(id: $id) {\n      id\n      createdAt\n      agent {\n        id\n        name\n      }\n      messages {\n        id\n        role\n        text\n        toolCallId\n        createdAt\n        toolCalls {\n          id\n          name\n          toolId\n          arguments\n        }\n      }\n      turns {\n        id\n        status\n        error\n        pendingElicitations {\n          ...ElicitationCard\n        }\n      }\n    }\n  }\n": typeof types.ThreadDocument,
    "\n  query Agents {\n    agents {\n      id\n      name\n      description\n    }\n  }\n": typeof types.AgentsDocument,
    "\n  mutation SendMessage($input: StartTurnInput!) {\n    startTurn(input: $input) {\n      thread {\n        id\n      }\n      turn {\n        ...TurnView\n      }\n      userErrors {\n        code\n        message\n        field\n      }\n    }\n  }\n": typeof types.SendMessageDocument,
    "\n  query Grants {\n    approvalGrants(first: 100) {\n      edges {\n        node {\n          id\n          scope\n          state\n          toolId\n          createdAt\n          expiresAt\n          agent {\n            id\n            name\n          }\n          thread {\n            id\n          }\n          uses {\n            toolCallId\n          }\n        }\n      }\n    }\n  }\n": typeof types.GrantsDocument,
    "\n  mutation RevokeGrant($input: RevokeApprovalGrantInput!) {\n    revokeApprovalGrant(input: $input) {\n      grant {\n        id\n        state\n        revokedAt\n      }\n      userErrors {\n        code\n        message\n      }\n    }\n  }\n": typeof types.RevokeGrantDocument,
};
const documents: Documents = {
    "\n  query Viewer {\n    viewer {\n      id\n      isAdmin\n    }\n  }\n": types.ViewerDocument,
    "\n  fragment ElicitationCard on Elicitation {\n    id\n    status\n    resolution\n    message\n    requestedSchema\n    createdAt\n    expiresAt\n    canEdit\n    canRemember\n    resolvedBy\n    resolvedAt\n    toolCall {\n      toolId\n      name\n      arguments\n      annotations {\n        title\n        readOnlyHint\n        destructiveHint\n        idempotentHint\n        openWorldHint\n      }\n    }\n    response {\n      action\n      content\n      arguments\n      remember {\n        scope\n        ttlSeconds\n      }\n    }\n    turn {\n      id\n      userMessage {\n        text\n      }\n      thread {\n        id\n        agent {\n          id\n          name\n          tools {\n            toolId\n            label\n          }\n        }\n      }\n    }\n  }\n": types.ElicitationCardFragmentDoc,
    "\n  fragment TurnView on Turn {\n    id\n    status\n    text\n    error\n    iterations\n    expiresAt\n    updatedAt\n    messages {\n      id\n      role\n      text\n      toolCallId\n      toolCalls {\n        id\n        name\n        toolId\n        arguments\n      }\n    }\n    elicitations {\n      id\n      status\n      resolvedBy\n      response {\n        action\n        arguments\n      }\n    }\n  }\n": types.TurnViewFragmentDoc,
    "\n  subscription InboxPending {\n    elicitationRequested(includePending: true) {\n      ...ElicitationCard\n    }\n  }\n": types.InboxPendingDocument,
    "\n  subscription TurnLive($turnId: ID!) {\n    turnEvents(turnId: $turnId) {\n      __typename\n      ... on Turn {\n        ...TurnView\n      }\n      ... on TurnTextDelta {\n        turnId\n        iteration\n        index\n        offset\n        delta\n      }\n    }\n  }\n": types.TurnLiveDocument,
    "\n  mutation Answer($input: ResolveElicitationInput!) {\n    resolveElicitation(input: $input) {\n      elicitation {\n        ...ElicitationCard\n      }\n      turn {\n        ...TurnView\n      }\n      userErrors {\n        code\n        message\n        field\n      }\n    }\n  }\n": types.AnswerDocument,
    "\n  query History($after: String, $status: [ElicitationStatus!]) {\n    elicitations(first: 50, after: $after, status: $status, newestFirst: true) {\n      totalCount\n      pageInfo {\n        endCursor\n        hasNextPage\n      }\n      edges {\n        node {\n          ...ElicitationCard\n        }\n      }\n    }\n  }\n": types.HistoryDocument,
    "\n  query Threads {\n    threads(first: 50, newestFirst: true) {\n      edges {\n        node {\n          id\n          createdAt\n          agent {\n            id\n            name\n          }\n          turns {\n            id\n            status\n            updatedAt\n          }\n          messages {\n            id\n            role\n            text\n          }\n        }\n      }\n    }\n  }\n": types.ThreadsDocument,
    "\n  query Thread($id: ID!) {\n    thread(id: $id) {\n      id\n      createdAt\n      agent {\n        id\n        name\n      }\n      messages {\n        id\n        role\n        text\n        toolCallId\n        createdAt\n        toolCalls {\n          id\n          name\n          toolId\n          arguments\n        }\n      }\n      turns {\n        id\n        status\n        error\n        pendingElicitations {\n          ...ElicitationCard\n        }\n      }\n    }\n  }\n": types.ThreadDocument,
    "\n  query Agents {\n    agents {\n      id\n      name\n      description\n    }\n  }\n": types.AgentsDocument,
    "\n  mutation SendMessage($input: StartTurnInput!) {\n    startTurn(input: $input) {\n      thread {\n        id\n      }\n      turn {\n        ...TurnView\n      }\n      userErrors {\n        code\n        message\n        field\n      }\n    }\n  }\n": types.SendMessageDocument,
    "\n  query Grants {\n    approvalGrants(first: 100) {\n      edges {\n        node {\n          id\n          scope\n          state\n          toolId\n          createdAt\n          expiresAt\n          agent {\n            id\n            name\n          }\n          thread {\n            id\n          }\n          uses {\n            toolCallId\n          }\n        }\n      }\n    }\n  }\n": types.GrantsDocument,
    "\n  mutation RevokeGrant($input: RevokeApprovalGrantInput!) {\n    revokeApprovalGrant(input: $input) {\n      grant {\n        id\n        state\n        revokedAt\n      }\n      userErrors {\n        code\n        message\n      }\n    }\n  }\n": types.RevokeGrantDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Viewer {\n    viewer {\n      id\n      isAdmin\n    }\n  }\n"): (typeof documents)["\n  query Viewer {\n    viewer {\n      id\n      isAdmin\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment ElicitationCard on Elicitation {\n    id\n    status\n    resolution\n    message\n    requestedSchema\n    createdAt\n    expiresAt\n    canEdit\n    canRemember\n    resolvedBy\n    resolvedAt\n    toolCall {\n      toolId\n      name\n      arguments\n      annotations {\n        title\n        readOnlyHint\n        destructiveHint\n        idempotentHint\n        openWorldHint\n      }\n    }\n    response {\n      action\n      content\n      arguments\n      remember {\n        scope\n        ttlSeconds\n      }\n    }\n    turn {\n      id\n      userMessage {\n        text\n      }\n      thread {\n        id\n        agent {\n          id\n          name\n          tools {\n            toolId\n            label\n          }\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  fragment ElicitationCard on Elicitation {\n    id\n    status\n    resolution\n    message\n    requestedSchema\n    createdAt\n    expiresAt\n    canEdit\n    canRemember\n    resolvedBy\n    resolvedAt\n    toolCall {\n      toolId\n      name\n      arguments\n      annotations {\n        title\n        readOnlyHint\n        destructiveHint\n        idempotentHint\n        openWorldHint\n      }\n    }\n    response {\n      action\n      content\n      arguments\n      remember {\n        scope\n        ttlSeconds\n      }\n    }\n    turn {\n      id\n      userMessage {\n        text\n      }\n      thread {\n        id\n        agent {\n          id\n          name\n          tools {\n            toolId\n            label\n          }\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment TurnView on Turn {\n    id\n    status\n    text\n    error\n    iterations\n    expiresAt\n    updatedAt\n    messages {\n      id\n      role\n      text\n      toolCallId\n      toolCalls {\n        id\n        name\n        toolId\n        arguments\n      }\n    }\n    elicitations {\n      id\n      status\n      resolvedBy\n      response {\n        action\n        arguments\n      }\n    }\n  }\n"): (typeof documents)["\n  fragment TurnView on Turn {\n    id\n    status\n    text\n    error\n    iterations\n    expiresAt\n    updatedAt\n    messages {\n      id\n      role\n      text\n      toolCallId\n      toolCalls {\n        id\n        name\n        toolId\n        arguments\n      }\n    }\n    elicitations {\n      id\n      status\n      resolvedBy\n      response {\n        action\n        arguments\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription InboxPending {\n    elicitationRequested(includePending: true) {\n      ...ElicitationCard\n    }\n  }\n"): (typeof documents)["\n  subscription InboxPending {\n    elicitationRequested(includePending: true) {\n      ...ElicitationCard\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription TurnLive($turnId: ID!) {\n    turnEvents(turnId: $turnId) {\n      __typename\n      ... on Turn {\n        ...TurnView\n      }\n      ... on TurnTextDelta {\n        turnId\n        iteration\n        index\n        offset\n        delta\n      }\n    }\n  }\n"): (typeof documents)["\n  subscription TurnLive($turnId: ID!) {\n    turnEvents(turnId: $turnId) {\n      __typename\n      ... on Turn {\n        ...TurnView\n      }\n      ... on TurnTextDelta {\n        turnId\n        iteration\n        index\n        offset\n        delta\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation Answer($input: ResolveElicitationInput!) {\n    resolveElicitation(input: $input) {\n      elicitation {\n        ...ElicitationCard\n      }\n      turn {\n        ...TurnView\n      }\n      userErrors {\n        code\n        message\n        field\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation Answer($input: ResolveElicitationInput!) {\n    resolveElicitation(input: $input) {\n      elicitation {\n        ...ElicitationCard\n      }\n      turn {\n        ...TurnView\n      }\n      userErrors {\n        code\n        message\n        field\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query History($after: String, $status: [ElicitationStatus!]) {\n    elicitations(first: 50, after: $after, status: $status, newestFirst: true) {\n      totalCount\n      pageInfo {\n        endCursor\n        hasNextPage\n      }\n      edges {\n        node {\n          ...ElicitationCard\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query History($after: String, $status: [ElicitationStatus!]) {\n    elicitations(first: 50, after: $after, status: $status, newestFirst: true) {\n      totalCount\n      pageInfo {\n        endCursor\n        hasNextPage\n      }\n      edges {\n        node {\n          ...ElicitationCard\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Threads {\n    threads(first: 50, newestFirst: true) {\n      edges {\n        node {\n          id\n          createdAt\n          agent {\n            id\n            name\n          }\n          turns {\n            id\n            status\n            updatedAt\n          }\n          messages {\n            id\n            role\n            text\n          }\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query Threads {\n    threads(first: 50, newestFirst: true) {\n      edges {\n        node {\n          id\n          createdAt\n          agent {\n            id\n            name\n          }\n          turns {\n            id\n            status\n            updatedAt\n          }\n          messages {\n            id\n            role\n            text\n          }\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Thread($id: ID!) {\n    thread(id: $id) {\n      id\n      createdAt\n      agent {\n        id\n        name\n      }\n      messages {\n        id\n        role\n        text\n        toolCallId\n        createdAt\n        toolCalls {\n          id\n          name\n          toolId\n          arguments\n        }\n      }\n      turns {\n        id\n        status\n        error\n        pendingElicitations {\n          ...ElicitationCard\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query Thread($id: ID!) {\n    thread(id: $id) {\n      id\n      createdAt\n      agent {\n        id\n        name\n      }\n      messages {\n        id\n        role\n        text\n        toolCallId\n        createdAt\n        toolCalls {\n          id\n          name\n          toolId\n          arguments\n        }\n      }\n      turns {\n        id\n        status\n        error\n        pendingElicitations {\n          ...ElicitationCard\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Agents {\n    agents {\n      id\n      name\n      description\n    }\n  }\n"): (typeof documents)["\n  query Agents {\n    agents {\n      id\n      name\n      description\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SendMessage($input: StartTurnInput!) {\n    startTurn(input: $input) {\n      thread {\n        id\n      }\n      turn {\n        ...TurnView\n      }\n      userErrors {\n        code\n        message\n        field\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation SendMessage($input: StartTurnInput!) {\n    startTurn(input: $input) {\n      thread {\n        id\n      }\n      turn {\n        ...TurnView\n      }\n      userErrors {\n        code\n        message\n        field\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Grants {\n    approvalGrants(first: 100) {\n      edges {\n        node {\n          id\n          scope\n          state\n          toolId\n          createdAt\n          expiresAt\n          agent {\n            id\n            name\n          }\n          thread {\n            id\n          }\n          uses {\n            toolCallId\n          }\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query Grants {\n    approvalGrants(first: 100) {\n      edges {\n        node {\n          id\n          scope\n          state\n          toolId\n          createdAt\n          expiresAt\n          agent {\n            id\n            name\n          }\n          thread {\n            id\n          }\n          uses {\n            toolCallId\n          }\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RevokeGrant($input: RevokeApprovalGrantInput!) {\n    revokeApprovalGrant(input: $input) {\n      grant {\n        id\n        state\n        revokedAt\n      }\n      userErrors {\n        code\n        message\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation RevokeGrant($input: RevokeApprovalGrantInput!) {\n    revokeApprovalGrant(input: $input) {\n      grant {\n        id\n        state\n        revokedAt\n      }\n      userErrors {\n        code\n        message\n      }\n    }\n  }\n"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;
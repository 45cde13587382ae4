// Every GraphQL operation of the inbox, typed by graphql-codegen (npm run codegen) from schema.graphql.
import { graphql } from './gql';

// The display forms of untrusted text (argumentsDisplay, textDisplay: components/VisibleText.tsx) are selected field
// by field rather than through a fragment: the server's depth limit (10) counts a fragment spread as two levels, and a
// card inside History or Thread would pass it.

export const ViewerQuery = graphql(`
  query Viewer {
    viewer {
      id
      isAdmin
      name
      roles
    }
  }
`);

export const ElicitationCardFragment = graphql(`
  fragment ElicitationCard on Elicitation {
    id
    status
    resolution
    withdrawn
    callerConnected
    message
    requestedSchema
    createdAt
    expiresAt
    canEdit
    canRemember
    resolvedBy
    resolvedAt
    approval {
      roles
      required
      requester
    }
    answers {
      approver
      action
      counts
      answeredAt
    }
    toolCall {
      toolId
      name
      arguments
      argumentsDisplay {
        text
        hiddenCharacters {
          codePoint
          name
          offset
          escape
        }
        mixedScriptWords {
          word
          scripts
        }
      }
      annotations {
        title
        readOnlyHint
        destructiveHint
        idempotentHint
        openWorldHint
      }
    }
    response {
      action
      content
      arguments
      argumentsDisplay {
        text
        hiddenCharacters {
          codePoint
          name
          offset
          escape
        }
        mixedScriptWords {
          word
          scripts
        }
      }
      remember {
        scope
        ttlSeconds
      }
    }
    turn {
      id
      userMessage {
        text
      }
      thread {
        id
        agent {
          id
          name
          isGateway
          tools {
            toolId
            label
          }
        }
      }
    }
  }
`);

export const TurnViewFragment = graphql(`
  fragment TurnView on Turn {
    id
    status
    text
    textDisplay {
      text
      hiddenCharacters {
        codePoint
        name
        offset
        escape
      }
      mixedScriptWords {
        word
        scripts
      }
    }
    error
    iterations
    expiresAt
    updatedAt
    messages {
      id
      role
      text
      textDisplay {
        text
        hiddenCharacters {
          codePoint
          name
          offset
          escape
        }
        mixedScriptWords {
          word
          scripts
        }
      }
      toolCallId
      toolCalls {
        id
        name
        toolId
        arguments
      }
    }
    elicitations {
      id
      status
      resolvedBy
      withdrawn
      response {
        action
        arguments
      }
      answers {
        approver
        action
        counts
        answeredAt
      }
    }
  }
`);

export const PendingSubscription = graphql(`
  subscription InboxPending {
    elicitationRequested(includePending: true) {
      ...ElicitationCard
    }
  }
`);

// An approver's card (docs/approvers.md): what it needs and no more. Never the turn: it is the requester's alone.
export const ApproverCardFragment = graphql(`
  fragment ApproverCard on Elicitation {
    id
    status
    message
    createdAt
    expiresAt
    requestedBy
    resolvedBy
    approval {
      roles
      required
      requester
    }
    answers {
      approver
      action
      counts
      answeredAt
    }
    agent {
      id
      name
      tools {
        toolId
        label
      }
    }
    toolCall {
      toolId
      name
      arguments
      argumentsDisplay {
        text
        hiddenCharacters {
          codePoint
          name
          offset
          escape
        }
        mixedScriptWords {
          word
          scripts
        }
      }
      annotations {
        title
        readOnlyHint
        destructiveHint
        idempotentHint
        openWorldHint
      }
    }
  }
`);

// What the viewer may answer as an approver: first what pendingElicitations(scope: TO_ANSWER) lists, then each
// request offered to one of their roles, live, each once.
export const ToAnswerSubscription = graphql(`
  subscription InboxToAnswer {
    elicitationRequested(scope: TO_ANSWER, includePending: true) {
      ...ApproverCard
    }
  }
`);

export const ApproverCardLiveSubscription = graphql(`
  subscription ApproverCardLive($id: ID!) {
    elicitationUpdated(elicitationId: $id) {
      ...ApproverCard
    }
  }
`);

export const ApproverAnswerMutation = graphql(`
  mutation ApproverAnswer($input: ResolveElicitationInput!) {
    resolveElicitation(input: $input) {
      elicitation {
        ...ApproverCard
      }
      userErrors {
        code
        message
        field
      }
    }
  }
`);

export const TurnLiveSubscription = graphql(`
  subscription TurnLive($turnId: ID!) {
    turnEvents(turnId: $turnId) {
      __typename
      ... on Turn {
        ...TurnView
      }
      ... on TurnTextDelta {
        turnId
        iteration
        index
        offset
        delta
      }
    }
  }
`);

export const AnswerMutation = graphql(`
  mutation Answer($input: ResolveElicitationInput!) {
    resolveElicitation(input: $input) {
      elicitation {
        ...ElicitationCard
      }
      turn {
        ...TurnView
      }
      userErrors {
        code
        message
        field
      }
    }
  }
`);

// 25 a page: a full card (its arguments' display form included) fifty times over costs more than the server's query
// cost limit allows.
export const HistoryQuery = graphql(`
  query History($after: String, $status: [ElicitationStatus!]) {
    elicitations(first: 25, after: $after, status: $status, newestFirst: true) {
      totalCount
      pageInfo {
        endCursor
        hasNextPage
      }
      edges {
        node {
          ...ElicitationCard
        }
      }
    }
  }
`);

export const ThreadsQuery = graphql(`
  query Threads {
    threads(first: 50, newestFirst: true) {
      edges {
        node {
          id
          createdAt
          agent {
            id
            name
          }
          turns {
            id
            status
            updatedAt
          }
          messages {
            id
            role
            text
          }
        }
      }
    }
  }
`);

export const ThreadQuery = graphql(`
  query Thread($id: ID!) {
    thread(id: $id) {
      id
      createdAt
      agent {
        id
        name
        isGateway
      }
      messages {
        id
        role
        text
        textDisplay {
          text
          hiddenCharacters {
            codePoint
            name
            offset
            escape
          }
          mixedScriptWords {
            word
            scripts
          }
        }
        toolCallId
        createdAt
        toolCalls {
          id
          name
          toolId
          arguments
          argumentsDisplay {
            text
            hiddenCharacters {
              codePoint
              name
              offset
              escape
            }
            mixedScriptWords {
              word
              scripts
            }
          }
        }
      }
      turns {
        id
        status
        error
        pendingElicitations {
          ...ElicitationCard
        }
      }
    }
  }
`);

export const AgentsQuery = graphql(`
  query Agents {
    agents {
      id
      name
      description
    }
  }
`);

export const SendMessageMutation = graphql(`
  mutation SendMessage($input: StartTurnInput!) {
    startTurn(input: $input) {
      thread {
        id
      }
      turn {
        ...TurnView
      }
      userErrors {
        code
        message
        field
      }
    }
  }
`);

export const GrantsQuery = graphql(`
  query Grants {
    approvalGrants(first: 100) {
      edges {
        node {
          id
          scope
          state
          toolId
          createdAt
          expiresAt
          agent {
            id
            name
          }
          thread {
            id
          }
          uses {
            toolCallId
          }
        }
      }
    }
  }
`);

export const RevokeGrantMutation = graphql(`
  mutation RevokeGrant($input: RevokeApprovalGrantInput!) {
    revokeApprovalGrant(input: $input) {
      grant {
        id
        state
        revokedAt
      }
      userErrors {
        code
        message
      }
    }
  }
`);

export const StepUpQuery = graphql(`
  query StepUp($id: ID!, $arguments: JSON) {
    elicitation(id: $id) {
      id
      stepUp(arguments: $arguments) {
        required
        challenge
        options
      }
    }
  }
`);

export const StartPasskeyRegistrationMutation = graphql(`
  mutation StartPasskeyRegistration {
    startPasskeyRegistration {
      options
      userErrors {
        code
        message
        field
      }
    }
  }
`);

export const RegisterPasskeyMutation = graphql(`
  mutation RegisterPasskey($input: RegisterPasskeyInput!) {
    registerPasskey(input: $input) {
      passkey {
        credentialId
      }
      userErrors {
        code
        message
        field
      }
    }
  }
`);

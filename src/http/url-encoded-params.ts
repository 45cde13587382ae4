// A GET request and a form POST carry their GraphQL request as URL-encoded parameters, `variables` and `extensions`
// as JSON text. Yoga's parser for them calls JSON.parse unguarded, so malformed JSON there was an unexpected fault: a
// 500, and an error line with a stack in the log, that any client could cause before its credentials were read. These
// parsers answer 400 BAD_REQUEST naming the parameter instead, as Yoga does for a POST body that is not JSON.
import { createGraphQLError, type GraphQLParams, type Plugin } from 'graphql-yoga';

const FORM = 'application/x-www-form-urlencoded';

/** Replaces Yoga's parser of GET requests and form POSTs with one that refuses malformed JSON with a 400. */
export function useUrlEncodedParams(): Plugin {
  return {
    onRequestParse({ request, setRequestParser }) {
      if (request.method === 'GET') {
        setRequestParser((incoming) => paramsOf(new URL(incoming.url).searchParams, 'query parameter'));
      } else if (isFormPost(request)) {
        setRequestParser(async (incoming) => paramsOf(new URLSearchParams(await incoming.text()), 'form field'));
      }
    },
  };
}

/** Yoga's rule for a form POST: the first of the listed content types, parameters allowed. */
function isFormPost(request: Request): boolean {
  const type = request.headers.get('content-type')?.split(',')[0];
  return request.method === 'POST' && (type === FORM || !!type?.startsWith(`${FORM};`));
}

/** Yoga's reading of the parameters (an empty value is absent), with the JSON ones checked. */
function paramsOf(search: URLSearchParams, kind: string): GraphQLParams {
  return {
    operationName: search.get('operationName') || undefined,
    query: search.get('query') || undefined,
    variables: jsonParam(search, 'variables', kind) as GraphQLParams['variables'],
    extensions: jsonParam(search, 'extensions', kind) as GraphQLParams['extensions'],
  };
}

function jsonParam(search: URLSearchParams, name: string, kind: string): unknown {
  const text = search.get(name);
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw createGraphQLError(`The ${kind} "${name}" is not valid JSON: ${(error as Error).message}`, {
      extensions: { code: 'BAD_REQUEST', http: { status: 400 } },
    });
  }
}

// A runtime bound on how many list items one operation returns. Static limits (depth, cost) cannot see the
// fan-out of the data: `thread { turns { thread { turns { messages { text } } } } }` is shallow and cheap by
// the numbers, yet returns turns x turns x messages rows. Every list field counts its items against a budget
// per execution (per event, for a subscription); past it, list fields fail with RESULT_TOO_LARGE.
import {
  defaultFieldResolver,
  GraphQLError,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  type GraphQLSchema,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';

interface Budget {
  limit: number;
  /** Items used per execution: the root value tells subscription events apart; undefined for queries. */
  used: WeakMap<object, number>;
  usedWithoutRoot: number;
}

const budgets = new WeakMap<object, Budget>();
const wrapped = new WeakSet<GraphQLSchema>();

export function tooManyItemsError(limit: number): GraphQLError {
  return new GraphQLError(
    `This operation returns more than ${limit} list items; ask for less (fewer nested lists, smaller pages).`,
    {
      extensions: { code: 'RESULT_TOO_LARGE' },
    },
  );
}

function spend(context: unknown, root: unknown, count: number): void {
  const budget = typeof context === 'object' && context !== null ? budgets.get(context) : undefined;
  if (!budget) return;
  let used: number;
  if (typeof root === 'object' && root !== null) {
    used = (budget.used.get(root) ?? 0) + count;
    budget.used.set(root, used);
  } else {
    used = budget.usedWithoutRoot += count;
  }
  if (used > budget.limit) throw tooManyItemsError(budget.limit);
}

/** Wraps the resolver of every list field of the schema, once; without a budget in the context they pass through. */
export function countListItems(schema: GraphQLSchema): void {
  if (wrapped.has(schema)) return;
  wrapped.add(schema);
  for (const type of Object.values(schema.getTypeMap())) {
    if (!(type instanceof GraphQLObjectType) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      const returns = field.type instanceof GraphQLNonNull ? field.type.ofType : field.type;
      if (!(returns instanceof GraphQLList)) continue;
      const resolve = field.resolve ?? defaultFieldResolver;
      field.resolve = (source, args, context, info) => {
        spend(context, info.rootValue, 0); // already over: fail before loading more
        const count = (value: unknown) => {
          if (Array.isArray(value)) spend(context, info.rootValue, value.length);
          return value;
        };
        const result = resolve(source, args, context, info);
        return result instanceof Promise ? result.then(count) : count(result);
      };
    }
  }
}

/** A Yoga plugin that gives each operation's context a budget of `limit` list items. */
export function useListBudget(schema: GraphQLSchema, limit: number): Plugin {
  countListItems(schema);
  return {
    onContextBuilding({ context }) {
      budgets.set(context, { limit, used: new WeakMap(), usedWithoutRoot: 0 });
    },
  };
}

// docs/reference/graphql.md from schema.graphql (printed from the code by `npm run schema:print`): the root fields,
// then every type by kind, each with its fields, arguments and descriptions.
import {
  astFromValue,
  type GraphQLArgument,
  type GraphQLInputType,
  type GraphQLField,
  type GraphQLInputField,
  type GraphQLNamedType,
  type GraphQLSchema,
  type GraphQLType,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  isScalarType,
  isUnionType,
  print,
} from 'graphql';
import { cell, generatedNotice, table } from './markdown.js';

/** The anchor of a type's heading: its name in lower case (headings are `### Name`). */
const anchor = (type: GraphQLNamedType) => `#${type.name.toLowerCase()}`;

const BUILT_IN_SCALARS = new Set(['String', 'Int', 'Float', 'Boolean', 'ID']);

/** `[Turn!]!` with the named type linked to its section (built-in scalars are not). */
function typeRef(type: GraphQLType): string {
  const named = getNamedType(type);
  const text = String(type);
  if (BUILT_IN_SCALARS.has(named.name)) return `\`${text}\``;
  const [before, after] = [
    text.slice(0, text.indexOf(named.name)),
    text.slice(text.indexOf(named.name) + named.name.length),
  ];
  return `${before ? `\`${before}\`` : ''}[\`${named.name}\`](${anchor(named)})${after ? `\`${after}\`` : ''}`;
}

function description(item: { description?: string | null | undefined; deprecationReason?: string | null | undefined }) {
  const text = cell(item.description ?? '');
  return item.deprecationReason ? `${text} **Deprecated**: ${cell(item.deprecationReason)}` : text;
}

/** A default value as GraphQL writes it (`MINE`, not `"MINE"`). */
function defaultOf(value: unknown, type: GraphQLInputType): string {
  const ast = astFromValue(value, type);
  return ast ? print(ast) : JSON.stringify(value);
}

function argumentList(args: readonly GraphQLArgument[]): string {
  if (args.length === 0) return '';
  return args
    .map((a) => {
      const byDefault = a.defaultValue === undefined ? '' : ` = ${defaultOf(a.defaultValue, a.type)}`;
      const about = a.description ? `: ${cell(a.description)}` : '';
      return `\`${a.name}\` ${typeRef(a.type)}${cell(byDefault)}${about}`;
    })
    .join('<br>');
}

function fieldTable(fields: readonly GraphQLField<unknown, unknown>[]): string {
  const withArgs = fields.some((f) => f.args.length > 0);
  const head = withArgs ? ['Field', 'Type', 'Arguments', 'Description'] : ['Field', 'Type', 'Description'];
  return table(
    head,
    fields.map((f) =>
      withArgs
        ? [`\`${f.name}\``, typeRef(f.type), argumentList(f.args), description(f)]
        : [`\`${f.name}\``, typeRef(f.type), description(f)],
    ),
  );
}

function inputTable(fields: readonly GraphQLInputField[]): string {
  return table(
    ['Field', 'Type', 'Default', 'Description'],
    fields.map((f) => [
      `\`${f.name}\``,
      typeRef(f.type),
      f.defaultValue === undefined ? '' : `\`${defaultOf(f.defaultValue, f.type)}\``,
      description(f),
    ]),
  );
}

function typeSection(type: GraphQLNamedType): string {
  const parts = [`### ${type.name}`];
  if (type.description) parts.push(cell(type.description));
  if (isObjectType(type) || isInterfaceType(type)) {
    const interfaces = type.getInterfaces();
    if (interfaces.length > 0)
      parts.push(`Implements ${interfaces.map((i) => `[\`${i.name}\`](${anchor(i)})`).join(', ')}.`);
    parts.push(fieldTable(Object.values(type.getFields())));
  } else if (isInputObjectType(type)) {
    parts.push(inputTable(Object.values(type.getFields())));
  } else if (isEnumType(type)) {
    parts.push(
      table(
        ['Value', 'Description'],
        type.getValues().map((v) => [`\`${v.name}\``, description(v)]),
      ),
    );
  } else if (isUnionType(type)) {
    parts.push(
      `One of ${type
        .getTypes()
        .map((t) => `[\`${t.name}\`](${anchor(t)})`)
        .join(', ')}.`,
    );
  }
  return parts.join('\n\n');
}

export function graphqlReference(schema: GraphQLSchema): string {
  const roots = [
    ['Queries', schema.getQueryType()],
    ['Mutations', schema.getMutationType()],
    ['Subscriptions', schema.getSubscriptionType()],
  ] as const;
  const rootNames = new Set(roots.map(([, t]) => t?.name));
  const types = Object.values(schema.getTypeMap())
    .filter((t) => !t.name.startsWith('__') && !rootNames.has(t.name) && !BUILT_IN_SCALARS.has(t.name))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const kinds: [string, (t: GraphQLNamedType) => boolean][] = [
    ['Objects', isObjectType],
    ['Interfaces', isInterfaceType],
    ['Unions', isUnionType],
    ['Input objects', isInputObjectType],
    ['Enums', isEnumType],
    ['Scalars', isScalarType],
  ];
  const sections = [
    ...roots.flatMap(([title, type]) =>
      type ? [`## ${title}\n\n${fieldTable(Object.values(type.getFields()))}`] : [],
    ),
    ...kinds.flatMap(([title, is]) => {
      const ofKind = types.filter(is);
      return ofKind.length > 0 ? [`## ${title}\n\n${ofKind.map(typeSection).join('\n\n')}`] : [];
    }),
  ];
  return `${generatedNotice('schema.graphql')}

# GraphQL API reference

Every operation and type of the API at \`/graphql\`, from [\`schema.graphql\`](../../schema.graphql), which
\`npm run schema:print\` prints from the code. How to use it: [The API](../api.md).

${sections.join('\n\n')}
`;
}

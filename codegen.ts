// graphql-codegen: typed operations for the inbox (web/inbox) from the server's own printed schema.graphql.
// `npm run codegen` writes web/inbox/src/gql/; `npm run codegen:check` (in `npm test`) fails when that is stale.
import type { CodegenConfig } from '@graphql-codegen/cli';

const config: CodegenConfig = {
  schema: 'schema.graphql',
  documents: ['web/inbox/src/**/*.{ts,tsx}', '!web/inbox/src/gql/**'],
  ignoreNoDocuments: false,
  generates: {
    'web/inbox/src/gql/': {
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: {
        useTypeImports: true,
        enumsAsTypes: true,
        scalars: { DateTime: 'string', JSON: 'unknown' },
      },
    },
  },
};

export default config;

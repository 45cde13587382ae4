// ESLint (flat config): typescript-eslint's recommended rules on every TypeScript file; formatting is Prettier's.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'dist/',
      'data/',
      'coverage/',
      '.scratch/',
      'drizzle/',
      'web/inbox/dist/',
      'web/inbox/src/gql/',
      'src/client/generated.ts',
      'docs/.vitepress/dist/',
      'docs/.vitepress/cache/',
      'api/',
    ],
  },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      // `_`-prefixed names are deliberately unused (a resolver's parent, a rest sibling left out).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  {
    // Tests and benchmarks read GraphQL responses, untyped JSON, field by field; src/ stays free of `any`.
    files: ['test/**', 'bench/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // The approval inbox runs in the browser.
    files: ['web/inbox/src/**'],
    languageOptions: { globals: { ...globals.browser } },
  },
  prettier,
);

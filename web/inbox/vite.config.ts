// Vite builds the inbox into web/inbox/dist (git-ignored), which the server serves at /inbox (src/http/inbox.ts).
// `npm run inbox:dev` serves it with hot reload, proxying the API to a toolgate on 127.0.0.1:4000.
import { fileURLToPath } from 'node:url';
import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/inbox/',
  plugins: [preact()],
  // Relative to root: the files the page needs, and nothing else.
  publicDir: false,
  logLevel: 'warn',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // No inline polyfill script: the server's Content-Security-Policy allows scripts from the page's origin only.
    modulePreload: { polyfill: false },
    target: 'es2022',
  },
  server: {
    proxy: { '/graphql': { target: 'http://127.0.0.1:4000', ws: true } },
  },
});

// The inbox's static files over real HTTP (src/http/inbox.ts): `/` links to /inbox, client routes get index.html,
// assets their content types, nothing outside the build directory is reachable, a missing build is a clear 503.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness.js';

/** GET with the path sent exactly as written (fetch would normalise "..", which is what we test). */
function get(base: string, path: string, method = 'GET') {
  const url = new URL(base);
  return new Promise<{ status: number; type: string; body: string; headers: Record<string, unknown> }>(
    (resolve, reject) => {
      const req = request({ host: url.hostname, port: url.port, path, method }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode!, type: String(res.headers['content-type']), body, headers: res.headers }),
        );
      });
      req.on('error', reject);
      req.end();
    },
  );
}

describe('the inbox site', () => {
  const root = mkdtempSync(join(tmpdir(), 'toolgate-inbox-'));
  const build = join(root, 'dist');
  let h: Harness;
  let bare: Harness;
  let base: string;

  beforeAll(async () => {
    mkdirSync(join(build, 'assets'), { recursive: true });
    writeFileSync(
      join(build, 'index.html'),
      '<!doctype html><title>inbox</title><script src="/inbox/assets/app-1.js">',
    );
    writeFileSync(join(build, 'assets', 'app-1.js'), 'console.log(1)');
    writeFileSync(join(build, 'assets', 'app-1.css'), 'body{}');
    writeFileSync(join(root, 'secret.txt'), 'outside the build');
    h = await startHarness({ inboxBuildDir: build });
    bare = await startHarness({ inboxBuildDir: join(root, 'missing') });
    base = h.url.replace(/\/graphql$/, '');
  });
  afterAll(async () => {
    await h?.close();
    await bare?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('/ is a page that links to /inbox and /graphql', async () => {
    const page = await get(base, '/');
    expect(page.status).toBe(200);
    expect(page.type).toBe('text/html; charset=utf-8');
    expect(page.body).toContain('href="/inbox"');
    expect(page.body).toContain('href="/graphql"');
  });

  it('serves index.html for /inbox, /inbox/ and client routes, assets with their types and long caching', async () => {
    for (const path of ['/inbox', '/inbox/', '/inbox/history', '/inbox/threads/thr_1?x=1']) {
      const page = await get(base, path);
      expect(page.status, path).toBe(200);
      expect(page.body, path).toContain('<title>inbox</title>');
      expect(page.headers['cache-control'], path).toBe('no-cache');
      expect(String(page.headers['content-security-policy']), path).toContain("frame-ancestors 'none'");
    }
    const js = await get(base, '/inbox/assets/app-1.js');
    expect([js.status, js.type, js.body]).toEqual([200, 'text/javascript; charset=utf-8', 'console.log(1)']);
    expect(js.headers['cache-control']).toContain('immutable');
    expect((await get(base, '/inbox/assets/app-1.css')).type).toBe('text/css; charset=utf-8');
    const head = await get(base, '/inbox/assets/app-1.js', 'HEAD');
    expect([head.status, head.body, head.headers['content-length']]).toEqual([200, '', '14']);
  });

  it('answers 404 for missing files and for every way out of the build directory', async () => {
    expect((await get(base, '/inbox/assets/nope.js')).status).toBe(404);
    for (const path of [
      '/inbox/../secret.txt',
      '/inbox/..%2fsecret.txt',
      '/inbox/%2e%2e/secret.txt',
      '/inbox/assets/..%2f..%2fsecret.txt',
      '/inbox/..%5csecret.txt',
      '/inbox/%00.js',
    ]) {
      const response = await get(base, path);
      expect(response.status, path).toBe(404);
      expect(response.body, path).not.toContain('outside the build');
    }
    expect((await get(base, '/inbox/%E0%A4%A.js')).status).toBe(400);
  });

  it('refuses other methods, and leaves /graphql to the API', async () => {
    expect((await get(base, '/inbox', 'POST')).status).toBe(405);
    const api = await h.gql('{ viewer { id } }');
    expect(api.data).toEqual({ viewer: { id: 'local' } });
  });

  it('says how to build when there is no build (503), and the API still works', async () => {
    const bareBase = bare.url.replace(/\/graphql$/, '');
    const page = await get(bareBase, '/inbox/history');
    expect(page.status).toBe(503);
    expect(page.body).toContain('npm run inbox:build');
    expect((await bare.gql('{ viewer { id } }')).data).toEqual({ viewer: { id: 'local' } });
  });
});

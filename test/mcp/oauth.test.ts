// An MCP client that signs in by itself (MCP's authorization spec), against a real OpenID provider on loopback
// (test/support/oidc-provider.ts): /mcp answers 401 naming its protected resource metadata, the SDK's client reads
// it, registers with the provider (dynamic client registration), signs alice in through the provider's login form
// with PKCE, asks for a token for /mcp (RFC 8707) and calls a gated tool of an upstream MCP server process; bob, a
// reviewer signed in at the same provider, accepts it over GraphQL, and the result reaches the client. A token
// issued for another resource is refused.
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import type { ToolgateConfig } from '../../src/config/schema.js';
import { dataOf, startHarness, type Harness } from '../support/harness.js';
import { startOidcProvider, type OidcProvider } from '../support/oidc-provider.js';
import { bearer, INITIALIZE, MCP_HEADERS, send } from './support.js';

const UPSTREAM = fileURLToPath(new URL('../fixtures/mcp-server.mjs', import.meta.url));
const METADATA_PATH = '/.well-known/oauth-protected-resource';
/** Where the provider sends the browser back; nothing listens there: the test reads the redirect. */
const REDIRECT_URL = 'http://127.0.0.1:9/callback';
const PUBLIC = 'https://proxy.example.com/toolgate';

/** A gateway on the upstream's notes: deleting one waits for a reviewer other than the requester. */
function notesGateway(issuer: string): ToolgateConfig {
  return parseConfig(
    {
      models: {},
      toolSources: { notes: { type: 'mcp', command: process.execPath, args: [UPSTREAM] } },
      agents: [
        {
          id: 'notes',
          name: 'Notes',
          systemPrompt: '',
          tools: ['notes:*'],
          requireToolConfirmation: true,
          toolConfirmation: {
            'notes:delete_note': { approvers: { roles: ['reviewer'], required: 1, requester: 'EXCLUDED' } },
          },
          pauseTtlSeconds: 3600,
          maxIterations: 10,
        },
      ],
      plugins: [],
      auth: { oidc: { issuer } },
    },
    'toolgate.json',
  );
}

/**
 * What an MCP client (Claude Code, VS Code) keeps of its sign-in: the client registration, the tokens and the PKCE
 * verifier. Its "browser" is the provider fixture's signIn, which fills the login form as `user` and returns the
 * redirect back with the code.
 */
class SignInAs implements OAuthClientProvider {
  registration?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier?: string;
  authorizationUrl?: URL;
  code?: string;

  constructor(
    private readonly provider: OidcProvider,
    private readonly user: string,
  ) {}

  get redirectUrl(): string {
    return REDIRECT_URL;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'toolgate test MCP client',
      redirect_uris: [REDIRECT_URL],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.registration;
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.registration = information;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  async redirectToAuthorization(authorizationUrl: URL) {
    this.authorizationUrl = authorizationUrl;
    const back = await this.provider.signIn(authorizationUrl.href, this.user);
    this.code = back.searchParams.get('code') ?? undefined;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier!;
  }
}

const newClient = () => new Client({ name: 'oauth-test-client', version: '1.0.0' });

const TO_ANSWER = `{ pendingElicitations(scope: TO_ANSWER, first: 10) {
  edges { node { id status requestedBy toolCall { name arguments } } } } }`;
const ACCEPT = `mutation($input: ResolveElicitationInput!) {
  resolveElicitation(input: $input) { elicitation { id status resolvedBy } userErrors { code message } } }`;

describe('an MCP client that signs in by itself', () => {
  let provider: OidcProvider;
  let h: Harness;
  let origin: string;
  beforeAll(async () => {
    provider = await startOidcProvider({
      users: {
        alice: { name: 'Alice Example', groups: [] },
        bob: { name: 'Bob Example', groups: ['reviewer'] },
      },
    });
    h = await startHarness({ config: notesGateway(provider.issuer) });
    origin = new URL(h.url).origin;
  });
  afterAll(async () => {
    await h?.close();
    await provider?.close();
  });

  it('/mcp without a token: 401 naming its resource metadata, which names the provider', async () => {
    const response = await send(new URL('/mcp', origin), { headers: MCP_HEADERS, body: INITIALIZE });
    expect(response.status).toBe(401);
    const challenge = String(response.headers['www-authenticate']);
    expect(challenge).toMatch(/^Bearer /);
    expect(challenge).toContain(`resource_metadata="${origin}${METADATA_PATH}/mcp"`);
    expect(challenge).not.toContain('error=');

    const metadata = await (await fetch(`${origin}${METADATA_PATH}/mcp`)).json();
    expect(metadata).toMatchObject({
      resource: `${origin}/mcp`,
      authorization_servers: [provider.issuer],
      bearer_methods_supported: ['header'],
    });
    expect(metadata.scopes_supported).toEqual(expect.any(Array));
    // The server as a whole, and a gateway by its id.
    expect(await (await fetch(`${origin}${METADATA_PATH}`)).json()).toMatchObject({
      resource: origin,
      authorization_servers: [provider.issuer],
    });
    expect(await (await fetch(`${origin}${METADATA_PATH}/mcp/notes`)).json()).toMatchObject({
      resource: `${origin}/mcp/notes`,
    });
    // Any gateway path is described alike: a client without a token learns no agent id from it, and every path
    // /mcp answers 401 for has the metadata its challenge names.
    expect(await (await fetch(`${origin}${METADATA_PATH}/mcp/nope`)).json()).toMatchObject({
      resource: `${origin}/mcp/nope`,
    });
    expect((await fetch(`${origin}${METADATA_PATH}/mcp/nope/deeper`)).status).toBe(404);
    expect((await fetch(`${origin}${METADATA_PATH}/graphql`)).status).toBe(404);
    // A client in a browser reads it from another origin, after a preflight for its MCP-Protocol-Version header.
    const preflight = await fetch(`${origin}${METADATA_PATH}/mcp`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://inspector.example',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'mcp-protocol-version',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-headers')).toBe('mcp-protocol-version');
  });

  it('a token the provider issued for another resource: 401 invalid_token, with the metadata named again', async () => {
    // Another server, and another application on this server's origin.
    for (const resource of ['http://127.0.0.1:9/mcp', `${origin}/elsewhere`]) {
      const elsewhere = await provider.accessToken('alice', { resource });
      const response = await send(new URL('/mcp', origin), {
        headers: { ...MCP_HEADERS, ...bearer(elsewhere) },
        body: INITIALIZE,
      });
      expect(response.status).toBe(401);
      const challenge = String(response.headers['www-authenticate']);
      expect(challenge).toContain(`resource_metadata="${origin}${METADATA_PATH}/mcp"`);
      expect(challenge).toContain('error="invalid_token", error_description="token audience is not this server"');
      expect(challenge).not.toContain(elsewhere);
    }
  });

  it('discovers, registers, signs alice in, and its gated call runs once bob accepts it', async () => {
    const oauth = new SignInAs(provider, 'alice');
    const url = new URL('/mcp', origin);

    // The first connection finds no token: the SDK discovers and registers, and sends alice to the login form.
    const first = new StreamableHTTPClientTransport(url, { authProvider: oauth });
    await expect(newClient().connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(oauth.registration?.client_id).toEqual(expect.any(String));
    const asked = oauth.authorizationUrl!;
    expect(asked.origin).toBe(provider.issuer);
    expect(asked.searchParams.get('resource')).toBe(`${origin}/mcp`);
    expect(asked.searchParams.get('code_challenge_method')).toBe('S256');
    expect(oauth.code).toEqual(expect.any(String));
    await first.finishAuth(oauth.code!);
    const claims = decodeJwt(oauth.saved!.access_token);
    expect(claims).toMatchObject({ iss: provider.issuer, sub: 'alice', aud: `${origin}/mcp` });

    const client = newClient();
    await client.connect(new StreamableHTTPClientTransport(url, { authProvider: oauth }));
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['read_note', 'delete_note']));

    const call = client.callTool({ name: 'delete_note', arguments: { id: 'a' } });
    const reviewer = bearer(await provider.accessToken('bob', { resource: origin }));
    let pending: any[] = [];
    for (let tries = 0; pending.length === 0 && tries < 200; tries++) {
      if (tries > 0) await new Promise((resolve) => setTimeout(resolve, 25));
      pending = dataOf(await h.gql(TO_ANSWER, {}, reviewer)).pendingElicitations.edges.map((e: any) => e.node);
    }
    expect(pending).toEqual([
      expect.objectContaining({ requestedBy: 'alice', toolCall: { name: 'delete_note', arguments: { id: 'a' } } }),
    ]);
    const answer = dataOf(await h.gql(ACCEPT, { input: { elicitationId: pending[0].id, action: 'ACCEPT' } }, reviewer));
    expect(answer.resolveElicitation).toMatchObject({
      elicitation: { status: 'ACCEPTED', resolvedBy: 'bob' },
      userErrors: [],
    });
    expect(await call).toMatchObject({ content: [{ type: 'text', text: 'deleted a' }] });
    await client.close();
  });
});

describe('behind a proxy that serves toolgate under a path', () => {
  it('names the public URL in the challenge and the metadata, and reads the well-known path under it', async () => {
    const config = notesGateway('https://login.example.com');
    // The provider is never asked: no token comes.
    const h = await startHarness({ config: { ...config, server: { ...config.server, publicUrl: PUBLIC } } });
    try {
      const origin = new URL(h.url).origin;
      const response = await send(new URL('/mcp/notes', origin), { headers: MCP_HEADERS, body: INITIALIZE });
      expect(response.status).toBe(401);
      expect(response.headers['www-authenticate']).toContain(
        `resource_metadata="https://proxy.example.com${METADATA_PATH}/toolgate/mcp/notes"`,
      );
      // What the proxy passes on from https://proxy.example.com/.well-known/oauth-protected-resource/toolgate/...
      expect(await (await fetch(`${origin}${METADATA_PATH}/toolgate/mcp/notes`)).json()).toMatchObject({
        resource: `${PUBLIC}/mcp/notes`,
        authorization_servers: ['https://login.example.com'],
      });
      expect(await (await fetch(`${origin}${METADATA_PATH}/toolgate`)).json()).toMatchObject({ resource: PUBLIC });
      expect((await fetch(`${origin}${METADATA_PATH}/mcp`)).status).toBe(404);
    } finally {
      await h.close();
    }
  });
});

describe('without auth.oidc', () => {
  it('serves no protected resource metadata, and /mcp answers 401 with a plain Bearer challenge', async () => {
    const h = await startHarness({
      config: {
        models: {},
        toolSources: {},
        agents: [],
        plugins: [],
        auth: { tokens: [{ token: 'alice-token-5b2d4c6f7f3c9a1e', user: 'alice', admin: false }] },
      },
    });
    try {
      const origin = new URL(h.url).origin;
      expect((await fetch(`${origin}${METADATA_PATH}/mcp`)).status).toBe(404);
      expect((await fetch(`${origin}${METADATA_PATH}`)).status).toBe(404);
      const response = await send(new URL('/mcp', origin), { headers: MCP_HEADERS, body: INITIALIZE });
      expect(response.status).toBe(401);
      expect(response.headers['www-authenticate']).toBe('Bearer');
    } finally {
      await h.close();
    }
  });
});

// A real OpenID provider on loopback (oidc-provider, OpenID-certified), started by the tests: users with groups, JWT
// access tokens per resource indicator (RFC 8707) carrying `groups` and `name`, dynamic client registration for MCP
// clients, PKCE, and the library's development login form (any password). Tokens are minted the way a client gets
// them: Authorization Code with PKCE, driven over HTTP through the login form.
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK } from 'jose';

export interface FixtureUser {
  name?: string;
  email?: string;
  groups: string[];
}

export interface OidcProviderOptions {
  users?: Record<string, FixtureUser>;
  /** Lifetime of access tokens unless `accessToken` asks for another; default 300 s. */
  accessTokenTtlSeconds?: number;
  /**
   * Clients registered from the start besides the tests' own (client metadata as RFC 7591 writes it, e.g.
   * `{ client_id, client_secret, redirect_uris, grant_types: ['authorization_code', 'refresh_token'] }`).
   */
  clients?: Record<string, unknown>[];
}

export interface TokenRequest {
  /** The resource indicator: the token's audience. Any http://127.0.0.1:<port> or http://localhost:<port> URL. */
  resource: string;
  /** Resource scopes; the provider grants `toolgate` and `mcp`. */
  scope?: string;
  ttlSeconds?: number;
}

export interface OidcProvider {
  /** The issuer URL, e.g. http://127.0.0.1:41234 (no trailing slash). */
  issuer: string;
  /** The provider's signing key (private, with kid and alg), to craft tokens the provider would not issue. */
  privateJwk: JWK;
  /**
   * Rotates the signing key as providers do: a new key signs from now on, the old one stays published. Returns the
   * new key; `privateJwk` is then the new one.
   */
  rotateSigningKey(): Promise<JWK>;
  /** The users; change a user's groups and the next token carries the new ones. */
  users: Record<string, FixtureUser>;
  /** How many requests each path got (e.g. `/jwks`): to see what a verifier fetched. */
  requests: Map<string, number>;
  /** The public client every token of `accessToken` is issued to (a first-party client: no consent asked). */
  clientId: string;
  /** A real access token for `user` from the provider's token endpoint (Authorization Code + PKCE). */
  accessToken(user: string, request: TokenRequest): Promise<string>;
  /**
   * Follows an authorization request through the login form as `user` (any password) and returns the redirect to
   * the client's redirect_uri, with its `code` and `state`: what a browser would do. For clients of the tests' own
   * (an MCP client that registered itself, a backend-for-frontend).
   */
  signIn(authorizationUrl: string, user: string): Promise<URL>;
  /** Stops answering: a provider that is down. `start()` listens again on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

const DEFAULT_USERS: Record<string, FixtureUser> = {
  alice: { name: 'Alice Example', email: 'alice@example.test', groups: ['reviewer'] },
  bob: { name: 'Bob Example', email: 'bob@example.test', groups: ['reviewer'] },
  carol: { name: 'Carol Example', email: 'carol@example.test', groups: [] },
  root: { name: 'Root Admin', email: 'root@example.test', groups: ['admins'] },
};

const FIXTURE_CLIENT = 'toolgate-tests';
const FIXTURE_REDIRECT = 'http://127.0.0.1/callback';
const RESOURCE_SCOPES = 'toolgate mcp';
const LOOPBACK_RESOURCE = /^http:\/\/(127\.0\.0\.1|localhost)(:\d+)?(\/[^?#]*)?$/;
/** The token request's header that asks for a lifetime (read by the provider's config below; tests only). */
const TTL_HEADER = 'x-fixture-token-ttl';

/**
 * oidc-provider warns on every start that its development login form is on, and on Node 20 that the runtime is not
 * the one it prefers: expected here, silenced while it loads and starts so that a green run stays quiet.
 */
async function quietly<T>(work: () => Promise<T>): Promise<T> {
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (typeof args[0] === 'string' && args[0].includes('oidc-provider WARNING')) return;
    warn(...args);
  };
  try {
    return await work();
  } finally {
    console.warn = warn;
  }
}

export async function startOidcProvider(options: OidcProviderOptions = {}): Promise<OidcProvider> {
  const users: Record<string, FixtureUser> = structuredClone(options.users ?? DEFAULT_USERS);
  const defaultTtl = options.accessTokenTtlSeconds ?? 300;
  const signingKeys: JWK[] = [await newSigningKey()];

  // The port first: the issuer is part of the provider's configuration.
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const issuer = `http://127.0.0.1:${port}`;

  const cookieKey = randomBytes(32).toString('hex');
  const build = () =>
    quietly(async () => {
      const { default: Provider, errors } = await import('oidc-provider');
      const instance = new Provider(issuer, {
        clients: [
          {
            client_id: FIXTURE_CLIENT,
            token_endpoint_auth_method: 'none',
            redirect_uris: [FIXTURE_REDIRECT],
            grant_types: ['authorization_code', 'refresh_token'],
            response_types: ['code'],
          },
          ...(options.clients ?? []),
        ],
        // A client allowed the refresh_token grant gets a refresh token (no offline_access and consent prompt needed).
        issueRefreshToken: (_ctx: unknown, client: { grantTypeAllowed(type: string): boolean }) =>
          client.grantTypeAllowed('refresh_token'),
        // The first key signs; the others are published for tokens they signed before a rotation.
        jwks: { keys: signingKeys },
        cookies: { keys: [cookieKey] },
        findAccount: (_ctx: unknown, id: string) => {
          const user = users[id];
          if (!user) return undefined;
          return {
            accountId: id,
            claims: () => ({ sub: id, name: user.name, email: user.email, groups: [...user.groups] }),
          };
        },
        claims: { openid: ['sub'], profile: ['name'], email: ['email'], groups: ['groups'] },
        scopes: ['openid', 'offline_access', 'profile', 'email', 'groups'],
        pkce: { required: () => true },
        ttl: {
          AccessToken: (ctx: any) => ttlOf(ctx) ?? defaultTtl,
          AuthorizationCode: 60,
          Grant: 3600,
          IdToken: 3600,
          Interaction: 600,
          RefreshToken: 3600,
          Session: 3600,
        },
        features: {
          devInteractions: { enabled: true },
          registration: { enabled: true },
          // A client may revoke only its own tokens (the default policy says so, with a notice on every call).
          revocation: {
            enabled: true,
            allowedPolicy: (_ctx: unknown, client: { clientId: string }, token: { clientId?: string }) =>
              token.clientId === client.clientId,
          },
          rpInitiatedLogout: {
            enabled: true,
            logoutSource: (ctx: { body: string }, form: string) => {
              ctx.body = `<!DOCTYPE html><html><head><title>Sign out</title></head><body>${form}<h1>Sign out?</h1><button autofocus type="submit" form="op.logoutForm" value="yes" name="logout">Yes, sign me out</button></body></html>`;
            },
          },
          resourceIndicators: {
            enabled: true,
            defaultResource: (_ctx: unknown, _client: unknown, oneOf?: string[]) => oneOf,
            useGrantedResource: () => true,
            getResourceServerInfo: (ctx: any, resource: string) => {
              if (!LOOPBACK_RESOURCE.test(resource)) throw new errors.InvalidTarget!();
              return {
                scope: RESOURCE_SCOPES,
                audience: resource,
                accessTokenTTL: ttlOf(ctx) ?? defaultTtl,
                accessTokenFormat: 'jwt',
                jwt: { sign: { alg: 'RS256', kid: signingKeys[0]!.kid } },
              };
            },
          },
        },
        // What a token carries besides the registered claims: the groups and name as they are when it is minted.
        extraTokenClaims: (_ctx: unknown, token: { kind: string; accountId?: string }) => {
          if (token.kind !== 'AccessToken' || !token.accountId) return undefined;
          const user = users[token.accountId];
          if (!user) return undefined;
          return {
            groups: [...user.groups],
            ...(user.name ? { name: user.name } : {}),
            ...(user.email ? { email: user.email } : {}),
          };
        },
        // Every client here is the tests' own: grant what it asks for, no consent page.
        loadExistingGrant: async (ctx: any) => {
          const { oidc } = ctx;
          const grantId = oidc.result?.consent?.grantId ?? oidc.session.grantIdFor(oidc.client.clientId);
          const grant = grantId
            ? await oidc.provider.Grant.find(grantId)
            : new oidc.provider.Grant({ clientId: oidc.client.clientId, accountId: oidc.session.accountId });
          grant.addOIDCScope('openid offline_access profile email groups');
          grant.addOIDCClaims(['name', 'email', 'groups']);
          const resources = oidc.params.resource;
          for (const resource of Array.isArray(resources) ? resources : resources ? [resources] : []) {
            grant.addResourceScope(resource, RESOURCE_SCOPES);
          }
          await grant.save();
          return grant;
        },
        renderError: (ctx: any, out: Record<string, string>) => {
          ctx.type = 'json';
          ctx.body = out;
        },
      });
      return instance;
    });
  let handler = (await build()).callback();
  const requests = new Map<string, number>();
  server.on('request', (req, res) => {
    const path = new URL(req.url ?? '/', issuer).pathname;
    requests.set(path, (requests.get(path) ?? 0) + 1);
    handler(req, res);
  });

  let open = true;
  const stop = async () => {
    if (!open) return;
    open = false;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  };
  const start = async () => {
    if (open) return;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    open = true;
  };

  const signIn = async (authorizationUrl: string, user: string): Promise<URL> => {
    const jar = new Map<string, string>();
    let url = new URL(authorizationUrl, issuer);
    let body: URLSearchParams | undefined;
    for (let hops = 0; hops < 20; hops++) {
      const response = await fetch(url, {
        method: body ? 'POST' : 'GET',
        redirect: 'manual',
        headers: {
          ...(jar.size ? { cookie: [...jar].map(([name, value]) => `${name}=${value}`).join('; ') } : {}),
          ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        },
        ...(body ? { body } : {}),
      });
      body = undefined;
      for (const cookie of response.headers.getSetCookie()) {
        const [pair] = cookie.split(';');
        const at = pair!.indexOf('=');
        const name = pair!.slice(0, at);
        const value = pair!.slice(at + 1);
        if (!value || /expires=Thu, 01 Jan 1970/i.test(cookie)) jar.delete(name);
        else jar.set(name, value);
      }
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location) {
        const next = new URL(location, url);
        if (next.origin !== issuer) return next;
        url = next;
        continue;
      }
      const text = await response.text();
      if (response.status === 200 && text.includes('name="prompt" value="login"')) {
        // The development login form: any login the provider knows, any password.
        body = new URLSearchParams({ prompt: 'login', login: user, password: 'any' });
        continue;
      }
      if (response.status === 200 && text.includes('name="prompt" value="consent"')) {
        // The consent page (a native client always gets it): "Continue".
        body = new URLSearchParams({ prompt: 'consent' });
        continue;
      }
      throw new Error(`the provider answered ${response.status} at ${url.pathname}: ${text.slice(0, 300)}`);
    }
    throw new Error('the provider redirected too often');
  };

  const accessToken = async (user: string, request: TokenRequest): Promise<string> => {
    if (!users[user]) throw new Error(`no such user at the provider: ${user}`);
    const verifier = randomBytes(32).toString('base64url');
    const state = randomBytes(8).toString('hex');
    const authorize = new URL('/auth', issuer);
    authorize.search = new URLSearchParams({
      client_id: FIXTURE_CLIENT,
      response_type: 'code',
      redirect_uri: FIXTURE_REDIRECT,
      scope: `openid ${request.scope ?? 'toolgate'}`,
      resource: request.resource,
      state,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      prompt: 'login',
    }).toString();
    const callback = await signIn(authorize.href, user);
    const code = callback.searchParams.get('code');
    if (!code || callback.searchParams.get('state') !== state) {
      throw new Error(`no code from the provider: ${callback.search}`);
    }
    const response = await fetch(new URL('/token', issuer), {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        ...(request.ttlSeconds !== undefined ? { [TTL_HEADER]: String(request.ttlSeconds) } : {}),
      },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        client_id: FIXTURE_CLIENT,
        code,
        redirect_uri: FIXTURE_REDIRECT,
        code_verifier: verifier,
        resource: request.resource,
      }),
    });
    const tokens = (await response.json()) as { access_token?: string };
    if (!response.ok || !tokens.access_token) {
      throw new Error(`the token endpoint answered ${response.status}: ${JSON.stringify(tokens)}`);
    }
    return tokens.access_token;
  };

  const fixture: OidcProvider = {
    issuer,
    privateJwk: signingKeys[0]!,
    async rotateSigningKey() {
      signingKeys.unshift(await newSigningKey());
      handler = (await build()).callback();
      fixture.privateJwk = signingKeys[0]!;
      return fixture.privateJwk;
    },
    users,
    requests,
    clientId: FIXTURE_CLIENT,
    accessToken,
    signIn,
    stop,
    start,
    close: stop,
  };
  return fixture;
}

/** RS256: the algorithm of ID tokens unless a client registers another, and of most providers' access tokens. */
async function newSigningKey(): Promise<JWK> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return {
    ...(await exportJWK(privateKey)),
    kid: `fixture-${randomBytes(4).toString('hex')}`,
    alg: 'RS256',
    use: 'sig',
  };
}

/** The lifetime a token request asked for through the test-only header, if any. */
function ttlOf(ctx: { get?(name: string): string } | undefined): number | undefined {
  const value = ctx?.get?.(TTL_HEADER);
  return value ? Number(value) : undefined;
}

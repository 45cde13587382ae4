// Which "aud" values name this server: its audience, or one of its MCP endpoints beneath it (what an MCP client asks
// a token for), never another path of the same origin. And the scopes MCP clients are told to ask for.
import { describe, expect, it } from 'vitest';
import { oidcIssuerConfig } from '../../src/config/schema.js';
import { createOidcAuthenticator, isForThisServer } from '../../src/identity/oidc.js';

const AUDIENCE = 'https://toolgate.example.com';
const forUs = (aud: unknown, audience = AUDIENCE) => isForThisServer(aud, audience, ['/mcp']);

describe("a token's audience", () => {
  it('is this server: the audience, with or without its trailing slash', () => {
    expect(forUs(AUDIENCE)).toBe(true);
    expect(forUs(`${AUDIENCE}/`)).toBe(true);
    expect(forUs(AUDIENCE, `${AUDIENCE}/`)).toBe(true);
    expect(forUs('api://toolgate', 'api://toolgate')).toBe(true);
  });

  it("is this server: one of its MCP endpoints, /mcp and a gateway's /mcp/<id>", () => {
    expect(forUs(`${AUDIENCE}/mcp`)).toBe(true);
    expect(forUs(`${AUDIENCE}/mcp/ops`)).toBe(true);
    expect(forUs(['https://other.example.com', `${AUDIENCE}/mcp`])).toBe(true);
  });

  it('is not: another server, another path of this origin, a longer name, none', () => {
    expect(forUs('https://other.example.com')).toBe(false);
    expect(forUs('https://toolgate.example.com.evil.test/mcp')).toBe(false);
    expect(forUs(`${AUDIENCE}/elsewhere`)).toBe(false);
    expect(forUs(`${AUDIENCE}/mcpx`)).toBe(false);
    expect(forUs(`${AUDIENCE}:8443/mcp`)).toBe(false);
    expect(forUs(undefined)).toBe(false);
    expect(forUs([])).toBe(false);
    expect(forUs([42, null])).toBe(false);
  });
});

describe('the scopes MCP clients ask for', () => {
  const scopesOf = (...configs: Record<string, unknown>[]) =>
    createOidcAuthenticator(
      configs.map((fields, i) =>
        oidcIssuerConfig.parse({ issuer: `https://login${i}.example.com`, userPrefix: `p${i}:`, ...fields }),
      ),
      { defaultAudience: () => AUDIENCE },
    ).scopes;

  it('are openid, profile and email unless the config names them; several issuers: each named once', () => {
    expect(scopesOf({})).toEqual(['openid', 'profile', 'email']);
    expect(scopesOf({ scopes: ['openid', 'groups'] }, { scopes: ['groups', 'api://toolgate/mcp'] })).toEqual([
      'openid',
      'groups',
      'api://toolgate/mcp',
    ]);
  });

  it('are scope tokens: a space or a quote is a config error', () => {
    expect(() => oidcIssuerConfig.parse({ issuer: 'https://login.example.com', scopes: ['openid groups'] })).toThrow(
      /scope token/,
    );
    expect(() => oidcIssuerConfig.parse({ issuer: 'https://login.example.com', scopes: ['a"b'] })).toThrow(
      /scope token/,
    );
  });
});

// Who a verified token is: the user claim (prefixed), the display name, roles from a list or a space-separated
// string, through the role map, and admin rights from adminRoles. And auth.oidc's config errors, one line each.
import { describe, expect, it } from 'vitest';
import { demoConfig } from '../../src/config/demo.js';
import { parseConfig } from '../../src/config/load.js';
import { oidcIssuerConfig } from '../../src/config/schema.js';
import { rolesOf, viewerOf } from '../../src/identity/oidc.js';

const issuer = (fields: Record<string, unknown> = {}) =>
  oidcIssuerConfig.parse({ issuer: 'https://login.example.com/realms/corp', ...fields });

describe('the viewer of a verified token', () => {
  const exp = 2_000_000_000;

  it('is the user claim with the issuer, subject, name (else email), roles and the expiry in ms', () => {
    expect(viewerOf({ sub: 'u-1', name: 'Ada', groups: ['reviewer'], exp }, issuer())).toEqual({
      ok: true,
      viewer: {
        id: 'u-1',
        isAdmin: false,
        roles: ['reviewer'],
        name: 'Ada',
        issuer: 'https://login.example.com/realms/corp',
        subject: 'u-1',
        expiresAt: exp * 1000,
      },
    });
    expect(viewerOf({ sub: 'u-1', email: 'ada@example.com', exp }, issuer())).toMatchObject({
      viewer: { name: 'ada@example.com', roles: [] },
    });
  });

  it('reads the claims the config names; a prefix goes before the user id', () => {
    const config = issuer({
      userClaim: 'preferred_username',
      nameClaim: 'display',
      rolesClaim: 'roles',
      userPrefix: 'corp:',
    });
    expect(
      viewerOf({ sub: 'x', preferred_username: 'ada', display: 'Ada L.', roles: ['ops'], exp }, config),
    ).toMatchObject({ viewer: { id: 'corp:ada', subject: 'x', name: 'Ada L.', roles: ['ops'] } });
  });

  it('reads a nested claim by its dotted path, and a claim whose own name has dots as it is', () => {
    const keycloak = issuer({ rolesClaim: 'realm_access.roles' });
    expect(viewerOf({ sub: 'a', realm_access: { roles: ['reviewer'] }, exp }, keycloak)).toMatchObject({
      viewer: { roles: ['reviewer'] },
    });
    const auth0 = issuer({ rolesClaim: 'https://toolgate.example.com/roles' });
    expect(viewerOf({ sub: 'a', 'https://toolgate.example.com/roles': ['ops'], exp }, auth0)).toMatchObject({
      viewer: { roles: ['ops'] },
    });
    expect(viewerOf({ sub: 'a', realm_access: 'x', exp }, keycloak)).toMatchObject({ viewer: { roles: [] } });
  });

  it('refuses a token without the user claim', () => {
    expect(viewerOf({ sub: 'x', exp }, issuer({ userClaim: 'oid' }))).toEqual({
      ok: false,
      status: 401,
      reason: 'token has no "oid" claim',
    });
  });

  it('makes an admin of a holder of an adminRoles role, after the map', () => {
    const config = issuer({ roleMap: { 'Toolgate Admins': 'admin' }, adminRoles: ['admin'] });
    expect(viewerOf({ sub: 'a', groups: ['Toolgate Admins'], exp }, config)).toMatchObject({
      viewer: { isAdmin: true, roles: ['admin'] },
    });
    expect(viewerOf({ sub: 'a', groups: ['admin'], exp }, config)).toMatchObject({
      viewer: { isAdmin: false, roles: [] },
    });
  });
});

describe('roles from a claim', () => {
  it('takes a list or a space-separated string; anything else is no role', () => {
    expect(rolesOf(['reviewer', 'ops', 'reviewer'], undefined)).toEqual(['reviewer', 'ops']);
    expect(rolesOf('reviewer  ops', undefined)).toEqual(['reviewer', 'ops']);
    expect(rolesOf([1, null, 'ops'], undefined)).toEqual(['ops']);
    expect(rolesOf({ reviewer: true }, undefined)).toEqual([]);
    expect(rolesOf(undefined, undefined)).toEqual([]);
  });

  it('with a role map, gives the mapped roles (one or several) and drops the groups it does not name', () => {
    const map = { '/reviewers': 'reviewer', 'sec-team': ['reviewer', 'security'] };
    expect(rolesOf(['/reviewers', 'sec-team', 'everyone'], map)).toEqual(['reviewer', 'security']);
    expect(rolesOf(['constructor', 'toString'], map)).toEqual([]);
  });
});

describe('auth.oidc in the config', () => {
  const parse = (auth: unknown) => () => parseConfig({ ...demoConfig, auth }, 'toolgate.json');

  it('fills the defaults', () => {
    expect(parseConfig({ ...demoConfig, auth: { oidc: { issuer: 'https://id.example.com' } } }).auth?.oidc).toEqual({
      issuer: 'https://id.example.com',
      userClaim: 'sub',
      nameClaim: 'name',
      rolesClaim: 'groups',
      clockToleranceSeconds: 60,
    });
  });

  it.each([
    [{}, 'toolgate.json: auth: expected "tokens", "oidc" or both'],
    [{ oidc: { issuer: 'id.example.com' } }, /^toolgate\.json: auth\.oidc\.issuer: /],
    [{ oidc: { issuer: 'https://id.example.com?x=1' } }, /^toolgate\.json: auth\.oidc\.issuer: expected an http/],
    [
      { oidc: { issuer: 'https://id.example.com', algorithms: ['HS256'] } },
      /^toolgate\.json: auth\.oidc\.algorithms\[0\]: /,
    ],
    [
      { oidc: { issuer: 'https://id.example.com', algorithms: ['none'] } },
      /^toolgate\.json: auth\.oidc\.algorithms\[0\]: /,
    ],
    [
      { oidc: { issuer: 'https://id.example.com', roleMap: { Admins: 'Admin' } } },
      /^toolgate\.json: auth\.oidc\.roleMap\.Admins: /,
    ],
    [
      { oidc: { issuer: 'https://id.example.com', clockToleranceSeconds: 3600 } },
      /^toolgate\.json: auth\.oidc\.clockToleranceSeconds: /,
    ],
    [{ oidc: { issuer: 'https://id.example.com', audiance: 'x' } }, /^toolgate\.json: auth\.oidc: .*audiance/],
  ])('refuses %j with one line naming the field', (auth, message) => {
    let error: Error | undefined;
    try {
      parse(auth)();
    } catch (caught) {
      error = caught as Error;
    }
    expect(error?.message.split('\n')).toHaveLength(1);
    expect(error?.message).toMatch(message);
  });
});

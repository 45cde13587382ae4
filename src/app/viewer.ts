import type { AnswerIdentity } from '../domain/records.js';

/** Who a use case acts for: the authenticated user (src/http/auth.ts finds them), whether they administer, their roles. */
export interface Viewer {
  id: string;
  isAdmin: boolean;
  /**
   * The roles of the credentials they came with, as they are now: `auth.tokens[].roles`, or the roles claim of the
   * identity provider's access token presented with this request. Approvers policies name roles.
   */
  roles: readonly string[];
  /** The display name the identity provider gives (its name claim, else email); none for static tokens. */
  name?: string;
  /** The identity provider that issued the token (its `iss`); none for static tokens. */
  issuer?: string;
  /** The user as that provider knows them (the token's `sub`); none for static tokens. */
  subject?: string;
  /** When the token stops being valid (epoch ms of its `exp`); none for static tokens, which do not expire. */
  expiresAt?: number;
}

/** Who answers, as the record keeps them: their name, issuer and subject (none for static tokens) and roles now. */
export function answerIdentityOf(viewer: Viewer): AnswerIdentity {
  return {
    name: viewer.name ?? null,
    issuer: viewer.issuer ?? null,
    subject: viewer.subject ?? null,
    roles: [...viewer.roles],
  };
}

/** Who a use case acts for: the authenticated user (src/http/auth.ts finds them), whether they administer, their roles. */
export interface Viewer {
  id: string;
  isAdmin: boolean;
  /** The roles of the token they came with (`auth.tokens[].roles`); approvers policies name roles. */
  roles: readonly string[];
}

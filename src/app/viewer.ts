/** Who a use case acts for: the authenticated user (src/http/auth.ts finds them), and whether they administer. */
export interface Viewer {
  id: string;
  isAdmin: boolean;
}

import type { Viewer } from '../graphql/builder.js';

/** Turns the `Authorization` value of a request (HTTP header, or connectionParams.authorization over WebSocket) into a viewer. */
export interface Authenticator {
  /** null: no valid credentials. */
  authenticate(authorization: string | null | undefined): Viewer | null;
}

export const LOCAL_VIEWER: Viewer = { id: 'local', isAdmin: true };

/** No `auth` section: everyone is the single admin user `local` (the server then listens on loopback only). */
export const localAuthenticator: Authenticator = {
  authenticate: () => LOCAL_VIEWER,
};

// The URL this server is reached at: server.publicUrl when the config says, else the address it listens on once it
// listens (a wildcard address such as 0.0.0.0 names no one: then only the config can say). It is the audience that
// identity providers' tokens must name when auth.oidc names none, and the resource of the protected resource metadata.

export interface PublicUrl {
  /** Without a trailing slash, e.g. https://toolgate.example.com or http://127.0.0.1:4000; undefined until known. */
  get(): string | undefined;
  /** The server listens at `url` (any URL on that origin). */
  listened(url: string): void;
}

export function publicUrl(configured?: string): PublicUrl {
  const fixed = configured?.replace(/\/+$/, '');
  let listened: string | undefined;
  return {
    get: () => fixed ?? listened,
    listened(url) {
      const { hostname, origin } = new URL(url);
      if (hostname === '0.0.0.0' || hostname === '[::]' || hostname === '') return;
      listened = origin;
    },
  };
}

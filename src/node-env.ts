// Imported first by the entry points (src/cli.ts, and the servers the bench starts or profiles), before any library
// reads NODE_ENV: a server process is "production" unless told otherwise. graphql-js reads it once, when first
// imported, and outside production checks every type test for a second copy of graphql (about 5 % of the CPU of a
// pendingElicitations query, docs/bench.md); graphql-ws then closes a socket on an internal error with "Internal
// server error" instead of the error's message. An explicit NODE_ENV (development, test) is left as it is.
process.env.NODE_ENV ||= 'production';

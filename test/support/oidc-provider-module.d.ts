// oidc-provider ships no types; the tests use only its constructor, its Koa app's callback and its models by name.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    proxy: boolean;
    on(event: string, listener: (...args: any[]) => void): this;
    Grant: any;
  }
  export const errors: Record<string, new (...args: any[]) => Error>;
  export default Provider;
}

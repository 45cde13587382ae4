// MCP 2026-07-28 clients of a test server's /mcp: the SDK's v2 Client, pinned to the revision (no fallback to 2025),
// with an elicitation handler when the test answers confirmations as the client.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

export const MODERN = '2026-07-28';

export interface ModernClientOptions {
  token?: string;
  /** Declares elicitation (form) and answers each confirmation with this; without, the client cannot elicit. */
  elicit?: (request: { params: Record<string, unknown> }) => Promise<{
    action: 'accept' | 'decline' | 'cancel';
    content?: Record<string, string | number | boolean | string[]>;
  }>;
  /** Rounds of input_required the client fulfils in one call (the SDK's default 8). */
  maxRounds?: number;
  /** Declares elicitation (form) without a handler: with autoFulfill false, the test answers. */
  canElicit?: boolean;
  /** Manual mode: an input_required result is the caller's to handle. */
  autoFulfill?: boolean;
}

export async function connectModernClient(url: URL, options: ModernClientOptions = {}): Promise<Client> {
  const client = new Client(
    { name: 'modern-test-client', version: '1.0.0' },
    {
      capabilities: options.elicit || options.canElicit ? { elicitation: { form: {} } } : {},
      versionNegotiation: { mode: { pin: MODERN } },
      inputRequired: {
        ...(options.maxRounds !== undefined && { maxRounds: options.maxRounds }),
        ...(options.autoFulfill !== undefined && { autoFulfill: options.autoFulfill }),
      },
    },
  );
  if (options.elicit) {
    const elicit = options.elicit;
    client.setRequestHandler('elicitation/create', (request) => elicit(request as never));
  }
  const headers: Record<string, string> = options.token ? { authorization: `Bearer ${options.token}` } : {};
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
  return client;
}

// The MCP gateway for one client session: tools/list and tools/call of one gateway agent, translated to the use
// cases of src/app/, which decide everything. The SDK's low-level Server, not McpServer: the tools are the agent's,
// with JSON Schemas known only at run time.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  type Tool as McpTool,
} from '@modelcontextprotocol/sdk/types.js';
import { listGatewayTools, type GatewayTool } from '../app/call-tool.js';
import { GatewayError, unknownGateway } from './refusals.js';
import { callGatewayTool, type GatewaySession } from './tool-call.js';

export type { GatewaySession } from './tool-call.js';

export function createGatewayServer(session: GatewaySession): Server {
  const server = new Server(
    { name: 'toolgate', version: '0.1.0' },
    { capabilities: { tools: { listChanged: false } } },
  );
  const guarded = <T>(run: () => Promise<T>): Promise<T> =>
    run().catch((error: unknown) => {
      if (error instanceof GatewayError) throw error;
      // A fault's own words (a database error, a stack) are not the client's: they go to the log.
      session.onError(error);
      throw new GatewayError(ErrorCode.InternalError, 'Internal error');
    });

  server.setRequestHandler(ListToolsRequestSchema, () =>
    guarded(async () => {
      const tools = await listGatewayTools(session.app, session.agentId);
      if (!tools) throw unknownGateway(session.agentId);
      return { tools: tools.map(mcpTool) };
    }),
  );
  server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
    guarded(() =>
      callGatewayTool(
        session,
        {
          params: request.params,
          clientName: server.getClientVersion()?.name ?? null,
          canElicit: Boolean(server.getClientCapabilities()?.elicitation?.form),
        },
        extra,
      ),
    ),
  );
  return server;
}

function mcpTool(tool: GatewayTool): McpTool {
  return {
    name: tool.name,
    ...(tool.title !== undefined && { title: tool.title }),
    description: tool.description,
    inputSchema: tool.inputSchema as McpTool['inputSchema'],
    ...(tool.outputSchema && { outputSchema: tool.outputSchema as McpTool['outputSchema'] }),
    annotations: tool.annotations as McpTool['annotations'],
  };
}

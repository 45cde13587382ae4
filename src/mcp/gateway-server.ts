// The MCP gateway for one client session: tools/list and tools/call of one gateway agent, the tasks a tools/call
// may become (tasks.ts), and what its upstream servers offer besides tools (pass-through.ts), translated to the use
// cases of src/app/, which decide everything. The SDK's low-level Server, not McpServer: the tools are the agent's,
// with JSON Schemas known only at run time.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type CreateTaskResult,
  type Tool as McpTool,
} from '@modelcontextprotocol/sdk/types.js';
import { listGatewayTools, type GatewayTool } from '../app/call-tool.js';
import { relayingCalls } from '../tools/call-relay.js';
import { PASS_THROUGH_CAPABILITIES, servePassThrough } from './pass-through.js';
import { onDisk } from './on-disk.js';
import { hidingFaults, unknownGateway } from './refusals.js';
import { createTaskStore, startGatewayTask } from './tasks.js';
import { callGatewayTool, type GatewaySession, type ToolCallRequest } from './tool-call.js';
import { upstreamRelay } from './upstream-relay.js';

export type { GatewaySession } from './tool-call.js';

export function createGatewayServer(session: GatewaySession): Server {
  const server = new Server(
    { name: 'toolgate', version: '0.1.0' },
    {
      capabilities: {
        tools: { listChanged: true },
        ...PASS_THROUGH_CAPABILITIES,
        tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
      },
      // tasks/get, tasks/result, tasks/list and tasks/cancel: the SDK's handlers, on the ledger.
      taskStore: createTaskStore(session),
    },
  );
  const guarded = <T>(run: () => Promise<T>): Promise<T> => hidingFaults(run, session);
  // Resources, prompts, completions and the upstream servers' announcements; ended with the session.
  const passThrough = servePassThrough(server, session);
  server.onclose = passThrough.end;

  server.setRequestHandler(ListToolsRequestSchema, () =>
    guarded(async () => {
      const tools = await listGatewayTools(session.app, session.agentId);
      if (!tools) throw unknownGateway(session.agentId);
      return { tools: tools.map(mcpTool) };
    }),
  );
  server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
    guarded<CallToolResult | CreateTaskResult>(() => {
      const call: ToolCallRequest = {
        params: request.params,
        clientName: server.getClientVersion()?.name ?? null,
        canElicit: Boolean(server.getClientCapabilities()?.elicitation?.form),
      };
      // Task-augmented: the SDK then expects a CreateTaskResult, whatever the client declared for its own side.
      if (request.params.task) return onDisk(session, startGatewayTask(session, call));
      // What the upstream server sends and asks while the call runs comes to this request.
      const relay = upstreamRelay(server, extra, request.params._meta?.progressToken, passThrough.logLevel);
      return onDisk(
        session,
        relayingCalls(relay, () => callGatewayTool(session, call, extra)),
      );
    }),
  );
  return server;
}

function mcpTool(tool: GatewayTool): McpTool {
  // Any call may be a task: it is a turn, which outlives the request, the session and the process.
  return { ...tool, execution: { taskSupport: 'optional' } } as McpTool;
}

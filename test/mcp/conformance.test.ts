// The official MCP conformance suite (@modelcontextprotocol/conformance, its server scenarios) against /mcp over real
// HTTP: a gateway agent over an upstream MCP server on stdio (test/fixtures/conformance-upstream.mjs: the tools,
// resources, prompts and completions the scenarios call), in local mode (the suite sends no credentials). The package
// is a CLI bundle without a programmatic API, and its CLI runs one scenario or a whole suite: it runs the whole suite
// once (about 5 s; one process per scenario would take ten times that). Each scenario of APPLICABLE must pass with no
// check failed or warned; those of SKIPPED no gateway can serve, and are not judged; a scenario in neither list (a
// later suite version's) fails the test until someone decides. docs/mcp-gateway.md "Conformance" explains the lists.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolgateConfig } from '../../src/config/schema.js';
import { dataOf, RESOLVE, startHarness, tempDir, type Harness } from '../support/harness.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/conformance-upstream.mjs', import.meta.url));

/** The scenarios judged here, and what each checks of the gateway. */
const APPLICABLE: Record<string, string> = {
  'server-initialize': 'initialize and notifications/initialized over Streamable HTTP',
  ping: 'ping answers {}',
  'tools-list': 'the upstream tools, each with a name, a description and an inputSchema',
  'tools-call-simple-text': "an upstream tool's text content, passed through",
  'tools-call-image': 'image content (data, mimeType), passed through',
  'tools-call-audio': 'audio content (audio/wav), passed through',
  'tools-call-embedded-resource': 'an embedded resource (uri, mimeType, text), passed through',
  'tools-call-mixed-content': 'text, image and resource content in one result, passed through',
  'tools-call-error': "an upstream tool's isError: true result, passed through as a result, not a JSON-RPC error",
  'tools-call-with-progress':
    "notifications/progress while a gated call waits for a person (the gateway's own: upstream progress is not relayed)",
  'json-schema-2020-12': "an upstream inputSchema's $schema, $defs and additionalProperties, listed unchanged",
  'server-sse-multiple-streams': 'three concurrent POSTs of one session, each answered on its own SSE stream',
  'dns-rebinding-protection': "local mode refuses another site's Host and Origin (403), accepts loopback's",
  'logging-set-level': 'logging/setLevel answers {}',
  'resources-list': "the upstream server's resources, each with a uri and a name",
  'resources-read-text': 'an upstream text resource (uri, mimeType, text), passed through',
  'resources-read-binary': 'an upstream binary resource (uri, mimeType, blob), passed through',
  'resources-templates-read': 'a URI of an upstream resource template, read at the server that lists the template',
  'resources-subscribe': 'resources/subscribe, forwarded to the upstream server',
  'resources-unsubscribe': 'resources/unsubscribe, forwarded to the upstream server',
  'prompts-list': "the upstream server's prompts, each with a name and a description",
  'prompts-get-simple': 'an upstream prompt without arguments, passed through',
  'prompts-get-with-args': "an upstream prompt's arguments, passed to it",
  'prompts-get-embedded-resource': 'a prompt message with an embedded resource, passed through',
  'prompts-get-with-image': 'a prompt message with an image, passed through',
  'completion-complete': "completion/complete of an upstream prompt's argument, at its server",
  'tools-call-with-logging': "an upstream tool's log messages while it runs, passed to the client at its level",
  'tools-call-sampling': "an upstream tool's sampling/createMessage, passed to the client and its answer back",
  'tools-call-elicitation': "an upstream tool's elicitation/create, passed to the client and its answer back",
  'elicitation-sep1034-defaults': "an upstream elicitation/create's defaults, passed to the client unchanged",
  'elicitation-sep1330-enums': "an upstream elicitation/create's enum schemas, passed to the client unchanged",
};

/** The scenarios that no gateway can serve, and why: what they need is the gateway's own, not an upstream's. */
const SKIPPED: Record<string, string> = {
  'server-sse-polling':
    "resumable SSE (SEP-1699) is the gateway's own transport's, not an upstream's: its tools/call must get a priming event (id, retry) and a stream closed mid-call, resumed with Last-Event-ID. toolgate keeps no event store; and the suite sends that call with MCP-Protocol-Version 2025-03-26, for which the SDK's transport sends no priming event even with one",
};

/** Upstream tools that run unasked (mode NEVER): the gateway passes their calls through. */
const UNASKED_TOOLS = [
  'test_simple_text',
  'test_image_content',
  'test_audio_content',
  'test_embedded_resource',
  'test_multiple_content_types',
  'test_error_handling',
  'json_schema_2020_12_tool',
  'test_tool_with_logging',
  'test_sampling',
  'test_elicitation',
  'test_elicitation_sep1034_defaults',
  'test_elicitation_sep1330_enums',
];
/** The one tool that waits for a person (mode ALWAYS): tools-call-with-progress checks the progress of that wait. */
const GATED_TOOL = 'test_tool_with_progress';
/** Progress notifications every PROGRESS_INTERVAL_MS while the gated call waits; the scenario wants at least 3. */
const PROGRESS_INTERVAL_MS = 100;
/** How long the stand-in for a person lets the gated call wait before accepting it: about ten notifications. */
const ANSWER_AFTER_MS = 1_000;
/** The suite's whole run takes about 2 s (and ANSWER_AFTER_MS); past this it is stuck and is stopped. */
const SUITE_DEADLINE_MS = 60_000;

function gatewayConfig(): ToolgateConfig {
  const modes = [
    ...UNASKED_TOOLS.map((name) => [`upstream:${name}`, 'NEVER'] as const),
    [`upstream:${GATED_TOOL}`, 'ALWAYS'] as const,
  ];
  return {
    models: {},
    toolSources: { upstream: { type: 'mcp', command: process.execPath, args: [FIXTURE] } },
    // Without "model" an agent is a gateway; the first one is served at /mcp.
    agents: [
      {
        id: 'conformance',
        name: 'Conformance gateway',
        systemPrompt: '',
        tools: ['upstream:*'],
        requireToolConfirmation: true,
        toolConfirmation: Object.fromEntries(modes),
        pauseTtlSeconds: 600,
        maxIterations: 10,
      },
    ],
    plugins: [],
  };
}

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'SKIPPED' | 'INFO';
  description: string;
  errorMessage?: string;
}

interface SuiteRun {
  version: string;
  /** The scenarios the suite ran, in its order. */
  scenarios: string[];
  checks: Map<string, Check[]>;
  /** The CLI's output, to show when a scenario has no results. */
  output: string;
}

const CONFORMANCE_PACKAGE = '@modelcontextprotocol/conformance/package.json';

/** Runs every server scenario of the suite against `url`, each scenario's checks read from its checks.json. */
async function runSuite(url: string, outputDir: string): Promise<SuiteRun> {
  const packageJson = createRequire(import.meta.url).resolve(CONFORMANCE_PACKAGE);
  const { version, bin } = JSON.parse(readFileSync(packageJson, 'utf8'));
  const cli = join(dirname(packageJson), bin.conformance);
  const child = spawn(process.execPath, [cli, 'server', '--url', url, '--suite', 'all', '-o', outputDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), SUITE_DEADLINE_MS);
  // Its exit status says whether any scenario failed, the skipped ones included: the checks say which.
  const [, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.on('close', (code, signal) => resolve([code, signal])),
  ).finally(() => clearTimeout(timer));
  if (signal) throw new Error(`the conformance suite did not end within ${SUITE_DEADLINE_MS} ms:\n${output}`);

  const scenarios = [...output.matchAll(/^=== Running scenario: (\S+) ===$/gm)].map((match) => match[1]!);
  const resultDirs = readdirSync(outputDir);
  const checks = new Map<string, Check[]>();
  for (const scenario of scenarios) {
    // The CLI names each scenario's directory server-<scenario>-<ISO time with - for : and .>.
    const pattern = new RegExp(`^server-${scenario.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-\\d{4}-\\d{2}-\\d{2}T`);
    const resultDir = resultDirs.find((name) => pattern.test(name));
    const file = resultDir && join(outputDir, resultDir, 'checks.json');
    if (file && existsSync(file)) checks.set(scenario, JSON.parse(readFileSync(file, 'utf8')));
  }
  return { version, scenarios, checks, output };
}

const PENDING = `{ pendingElicitations(first: 10) { edges { node { id toolCall { name } } } } }`;

/**
 * A stand-in for the person at the inbox: accepts each confirmation request ANSWER_AFTER_MS after it appears, through
 * the GraphQL API, until stopped. Resolves with the names of the tools it answered for.
 */
function answerConfirmations(h: Harness): { stop(): Promise<string[]> } {
  const answered: string[] = [];
  let stopped = false;
  const answer = async () => {
    while (!stopped) {
      const edges = dataOf(await h.gql(PENDING)).pendingElicitations.edges;
      for (const { node } of edges) {
        await new Promise((resolve) => setTimeout(resolve, ANSWER_AFTER_MS));
        const { userErrors } = dataOf(
          await h.gql(RESOLVE, { input: { elicitationId: node.id, action: 'ACCEPT' } }),
        ).resolveElicitation;
        if (userErrors.length > 0) throw new Error(`accepting ${node.toolCall.name}: ${JSON.stringify(userErrors)}`);
        answered.push(node.toolCall.name);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  // Its failure is reported by stop(), after the suite's run.
  const failed = answer().then(
    () => null,
    (error: unknown) => error,
  );
  return {
    async stop() {
      stopped = true;
      const error = await failed;
      if (error) throw error;
      return answered;
    },
  };
}

describe('the MCP conformance suite against /mcp', () => {
  let h: Harness;
  let output: ReturnType<typeof tempDir>;
  let run: SuiteRun;
  let answered: string[];

  beforeAll(async () => {
    output = tempDir();
    h = await startHarness({ config: gatewayConfig(), mcpProgressIntervalMs: PROGRESS_INTERVAL_MS });
    const person = answerConfirmations(h);
    try {
      run = await runSuite(new URL('/mcp', h.url).href, output.dir);
    } finally {
      answered = await person.stop();
    }
  }, SUITE_DEADLINE_MS + 15_000);

  afterAll(async () => {
    await h?.close();
    output?.cleanup();
  });

  it('has no scenario that this file has not decided on, and none that it lists in vain', () => {
    const decided = [...Object.keys(APPLICABLE), ...Object.keys(SKIPPED)].sort();
    expect([...run.scenarios].sort(), `the server scenarios of the suite ${run.version}`).toEqual(decided);
  });

  it.each(Object.entries(APPLICABLE))('%s: no check failed or warned (%s)', (scenario) => {
    const checks = run.checks.get(scenario);
    expect(checks, `no results for ${scenario}; the suite's output:\n${run.output}`).toBeDefined();
    const problems = checks!
      .filter((check) => check.status === 'FAILURE' || check.status === 'WARNING')
      .map((check) => `${check.status} ${check.id}: ${check.errorMessage ?? check.description}`);
    expect(problems).toEqual([]);
    expect(checks!.some((check) => check.status === 'SUCCESS')).toBe(true);
  });

  it('the gated call waited for a person, answered through GraphQL; every other call ran unasked', () => {
    expect(answered).toEqual([GATED_TOOL]);
  });
});

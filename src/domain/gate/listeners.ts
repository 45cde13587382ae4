import type { Agent, ElicitationRequest, ToolCall, ToolDefinition } from '../records.js';

/**
 * Dispatched immediately before each tool call. A listener may veto the call (it does not run and the
 * model is told why) or ask for confirmation by setting an elicitation request (the turn pauses).
 */
export class ToolPreExecuteEvent {
  #vetoReason: string | null = null;
  #elicitation: ElicitationRequest | null = null;
  #grantable = false;

  constructor(
    readonly agent: Readonly<Agent>,
    readonly threadId: string,
    readonly turnId: string,
    /** The trusted definition, never model output. */
    readonly tool: Readonly<ToolDefinition>,
    readonly toolCall: Readonly<ToolCall>,
  ) {}

  setVeto(reason: string): void {
    this.#vetoReason = reason;
  }

  isVetoed(): boolean {
    return this.#vetoReason !== null;
  }

  getVetoReason(): string | null {
    return this.#vetoReason;
  }

  /**
   * Ask for confirmation (null: ask nothing). `grantable`: a remembered approval of the tool may stand in for it
   * (docs/approvals.md); false unless the one asking says so, so a listener's own reason to ask is never skipped.
   */
  setElicitationRequest(request: ElicitationRequest | null, options: { grantable?: boolean } = {}): void {
    this.#elicitation = request;
    this.#grantable = request !== null && options.grantable === true;
  }

  /** Whether a remembered approval may stand in for the confirmation asked for. */
  isGrantable(): boolean {
    return this.#grantable;
  }

  getElicitationRequest(): ElicitationRequest | null {
    return this.#elicitation;
  }
}

export interface ToolPreExecuteListener {
  /** Higher runs first; ToolConfirmationListener is at 0. Default 0. */
  priority?: number;
  onToolPreExecute(event: ToolPreExecuteEvent): void | Promise<void>;
}

/** The default export of a plugin module named in the config file. */
export interface ToolgatePlugin {
  name: string;
  listeners: ToolPreExecuteListener[];
}

/** Listeners sorted by descending priority; equal priorities keep their registration order. */
export class ListenerRegistry {
  readonly #listeners: ToolPreExecuteListener[];

  constructor(listeners: ToolPreExecuteListener[]) {
    this.#listeners = listeners
      .map((listener, index) => ({ listener, index }))
      .sort((a, b) => (b.listener.priority ?? 0) - (a.listener.priority ?? 0) || a.index - b.index)
      .map(({ listener }) => listener);
  }

  async dispatch(event: ToolPreExecuteEvent): Promise<void> {
    for (const listener of this.#listeners) await listener.onToolPreExecute(event);
  }
}

import type { ModelMessage } from 'ai';
import type { InvokeOutcome, Ledger } from '../../stream/types';
import { snapshotArguments } from '../../tools/arguments';
import { watchCallApproval } from '../approvals/callApproval';
import { ApprovalCheck, grantOfToken } from './approvalCheck';

/** Thrown by `execute` for an approval the ledger did not ask for this tool call (forged, replayed or for other arguments). */
export class LedgerApprovalError extends Error {
  override readonly name = 'LedgerApprovalError';
  constructor(readonly toolCallId: string, detail: string) {
    super(`approval refused: ${detail}`);
  }
}

/** A ledger call started when the AI SDK asked whether this tool call needs approval. */
interface StartedCall {
  readonly tool: string;
  /** The canonical arguments the ledger call was made with: execute must see the same. */
  readonly canonical: string;
  /** The ledger's approval id; absent when the call ended before asking (its outcome is then final). */
  readonly approvalId: string | undefined;
  readonly outcome: Promise<InvokeOutcome<unknown>>;
}

/**
 * How many ended calls (their wait over without `execute` or a refusal taking them) stay in the
 * binding, so a late `execute` still gets their outcome. Waiting calls are bounded by the grant's
 * budget (each reserves a call); ended ones would otherwise stay for the life of the binding.
 */
export const endedCallsKept = 256;

/**
 * Binds the AI SDK's approval flow to the ledger's approval ids. `needsApproval` is a pure check of
 * the grant's rules; when the ledger would ask, it starts the ledger call, which waits, and keeps
 * toolCallId → the ledger's approval id. `execute` for an approved tool call approves THAT id (the
 * AI SDK's own approval id is not trusted: the messages carrying it come from the client) and
 * returns the call's outcome; `applyApprovalResponses` denies the ones the app refused. A toolCallId
 * the ledger holds no waiting call for is refused, so a forged or replayed approval runs nothing.
 */
export class ToolApprovals {
  private readonly check = new ApprovalCheck();
  private readonly started = new Map<string, StartedCall>();
  /** Calls that ended while still in `started`, oldest first (at most `endedCallsKept`). */
  private readonly ended: { readonly toolCallId: string; readonly call: StartedCall }[] = [];

  constructor(private readonly ledger: Ledger, private readonly token: string, private readonly approver: string) {}

  /**
   * The AI SDK's `needsApproval`: true once the ledger call waits for a person. The SDK asks again
   * before executing an approved call (its messages then hold the approval request): true only if
   * the ledger's call for that toolCallId still waits; false for a forged or replayed one, which the
   * SDK then treats as denied and never executes.
   */
  async needsApproval(tool: string, input: unknown, toolCallId: string, messages: readonly ModelMessage[]): Promise<boolean> {
    if (this.started.get(toolCallId)?.approvalId !== undefined) return true;
    if (this.started.has(toolCallId) || answeredBefore(messages, toolCallId) || !this.asks(tool, input)) return false;
    const snapshot = snapshotArguments(input);
    const grant = grantOfToken(this.ledger.state(), this.token);
    if (!snapshot.ok || grant === undefined) return false;
    let onRequested: (approvalId: string) => void = () => undefined;
    const requested = new Promise<string>((resolve) => (onRequested = resolve));
    const stop = watchCallApproval(this.ledger, { grantId: grant.grantId, tool, args: input }, (event) => onRequested(event.approvalId));
    const outcome = this.ledger.invoke(this.token, tool, input).finally(stop);
    const first = await Promise.race([requested, outcome.then(() => undefined)]);
    const call: StartedCall = { tool, canonical: snapshot.canonical, approvalId: first, outcome };
    this.started.set(toolCallId, call);
    void outcome.then(() => this.forgetLater(toolCallId, call), () => this.forgetLater(toolCallId, call));
    return first !== undefined;
  }

  /** Keeps an ended call for a late `execute`, dropping the oldest ended one past `endedCallsKept`. */
  private forgetLater(toolCallId: string, call: StartedCall): void {
    if (this.started.get(toolCallId) !== call) return; // already taken by execute or a refusal
    this.ended.push({ toolCallId, call });
    while (this.ended.length > endedCallsKept) {
      const oldest = this.ended.shift();
      // The same toolCallId may have started a newer call since: drop only the one that ended.
      if (oldest !== undefined && this.started.get(oldest.toolCallId) === oldest.call) this.started.delete(oldest.toolCallId);
    }
  }

  /**
   * The outcome for `execute`: a call started by `needsApproval` (approved here, by the ledger's id),
   * or undefined when none was started and the ledger would not ask (execute then invokes as usual).
   */
  async approvedOutcome(tool: string, input: unknown, toolCallId: string): Promise<InvokeOutcome<unknown> | undefined> {
    const call = this.started.get(toolCallId);
    if (call === undefined) {
      if (this.asks(tool, input)) throw new LedgerApprovalError(toolCallId, 'the ledger holds no waiting call for this tool call (forged or already used)');
      return undefined;
    }
    this.started.delete(toolCallId); // used once: a replayed approval finds nothing
    if (call.approvalId === undefined) return call.outcome;
    const snapshot = snapshotArguments(input);
    if (call.tool !== tool || !snapshot.ok || snapshot.canonical !== call.canonical) {
      await this.ledger.deny(call.approvalId, { by: this.approver, reason: 'the approved tool call does not match the call that waited' }).catch(() => undefined);
      throw new LedgerApprovalError(toolCallId, 'the approved tool call does not match the call the ledger asked about');
    }
    await this.ledger.approve(call.approvalId, { by: this.approver });
    return call.outcome; // refused as late or resolved: the outcome says how the wait ended
  }

  /** The ledger's approval id for a tool call waiting for a person (to show or log in the app). */
  approvalIdOf(toolCallId: string): string | undefined {
    return this.started.get(toolCallId)?.approvalId;
  }

  /**
   * Denies, through the ledger, every waiting call whose tool-approval-response in `messages` says
   * not approved (the AI SDK then skips `execute`). Returns how many the ledger denied.
   */
  async applyApprovalResponses(messages: readonly ModelMessage[]): Promise<number> {
    const toolCallOf = new Map<string, string>();
    const refused: string[] = [];
    for (const message of messages) {
      if (typeof message.content === 'string') continue;
      for (const part of message.content) {
        if (part.type === 'tool-approval-request') toolCallOf.set(part.approvalId, part.toolCallId);
        if (part.type === 'tool-approval-response' && !part.approved) refused.push(part.approvalId);
      }
    }
    let denied = 0;
    for (const sdkApprovalId of refused) {
      const toolCallId = toolCallOf.get(sdkApprovalId);
      const call = toolCallId === undefined ? undefined : this.started.get(toolCallId);
      if (toolCallId === undefined || call?.approvalId === undefined) continue;
      this.started.delete(toolCallId);
      const outcome = await this.ledger.deny(call.approvalId, { by: this.approver });
      if (outcome.status === 'denied') denied++;
    }
    return denied;
  }

  private asks(tool: string, input: unknown): boolean {
    try {
      const state = this.ledger.state();
      const grant = grantOfToken(state, this.token);
      return grant !== undefined && this.check.asks(state, grant, tool, input);
    } catch {
      return false; // a failing store: invoke then rejects the call (ledger_unavailable)
    }
  }
}

/** Whether the messages already carry an approval request for this tool call (the SDK re-checking an answer). */
function answeredBefore(messages: readonly ModelMessage[], toolCallId: string): boolean {
  for (const message of messages) {
    if (message.role !== 'assistant' || typeof message.content === 'string') continue;
    for (const part of message.content) if (part.type === 'tool-approval-request' && part.toolCallId === toolCallId) return true;
  }
  return false;
}

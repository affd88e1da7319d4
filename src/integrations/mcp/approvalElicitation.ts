import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { ElicitResultSchema, type ClientCapabilities, type ElicitRequestFormParams, type ElicitResult, type ServerNotification, type ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { LedgerApprovals } from '../../stream/approvalTypes';
import { watchCallApproval, type ApprovalRequested, type WatchedCall } from '../approvals/callApproval';
import { printable } from '../../text/printable';

/** The principal recorded as `by` when the proxy's client answers and no other name was given. */
export const defaultMcpApprover = 'mcp-client';
const noteCharsMax = 2_000;

export interface ApprovalElicitationOptions {
  readonly ledger: LedgerApprovals;
  /** What the client whose agent made the call declared (`elicitation` or not). */
  readonly clientCapabilities: ClientCapabilities | undefined;
  /**
   * The `tools/call` handler's `extra`: the question is sent as a request related to that call, so
   * over Streamable HTTP it travels on the call's own response stream.
   */
  readonly extra: Pick<RequestHandlerExtra<ServerRequest, ServerNotification>, 'sendRequest'>;
  readonly call: WatchedCall;
  /** Recorded as `by` on the approval or denial: the principal answering through this client. */
  readonly approver: string;
  readonly report: (line: string) => void;
  /** Read at the time of asking, to bound the question by the approval's deadline. */
  readonly now?: () => number;
}

/** The form the client shows: approve or deny, and an optional note. */
export const approvalForm: ElicitRequestFormParams['requestedSchema'] = {
  type: 'object',
  properties: {
    decision: { type: 'string', title: 'Decision', enum: ['approve', 'deny'] },
    note: { type: 'string', title: 'Note (optional)', maxLength: noteCharsMax },
  },
  required: ['decision'],
};

/**
 * Runs `invoke` (a call on `call.grantId`) and, if the call waits for approval and the client
 * declared elicitation, asks the client by `elicitation/create` and applies its answer with
 * `approve`/`deny` (`by` = `approver`); a decline or cancel denies. Without the capability, or if
 * the question fails (timeout, disconnect), the call keeps waiting for `atc approve` or its deadline.
 * The question is withdrawn when the call ends some other way.
 */
export async function withApprovalElicitation<T>(options: ApprovalElicitationOptions, invoke: () => Promise<T>): Promise<T> {
  if (!asksForms(options.clientCapabilities)) return invoke();
  const withdraw = new AbortController();
  const stop = watchCallApproval(options.ledger, options.call, (event) => void askClient(options, event, withdraw.signal));
  try {
    return await invoke();
  } finally {
    stop();
    withdraw.abort();
  }
}

/** Form elicitation: declared as `elicitation: {}` (before URL mode existed) or with `form`. */
function asksForms(capabilities: ClientCapabilities | undefined): boolean {
  const elicitation = capabilities?.elicitation;
  if (elicitation === undefined) return false;
  return elicitation.form !== undefined || elicitation.url === undefined;
}

async function askClient(options: ApprovalElicitationOptions, event: ApprovalRequested, signal: AbortSignal): Promise<void> {
  const { ledger, report, approver } = options;
  const tool = printable(event.tool);
  const remainingMs = event.deadline - (options.now ?? Date.now)();
  if (remainingMs <= 0) return;
  let answer: ElicitResult;
  try {
    const params: ElicitRequestFormParams = { message: approvalMessage(event), requestedSchema: approvalForm };
    answer = await options.extra.sendRequest({ method: 'elicitation/create', params }, ElicitResultSchema, { signal, timeout: remainingMs });
  } catch {
    if (!signal.aborted) report(`${tool} approval ${event.approvalId}: the client did not answer; waiting for atc approve or the deadline`);
    return;
  }
  if (signal.aborted) return;
  const content = answer.content ?? {};
  const approved = answer.action === 'accept' && content.decision === 'approve';
  const note = typeof content.note === 'string' && content.note.length > 0 && content.note.length <= noteCharsMax ? content.note : undefined;
  const outcome = await decide(ledger, event.approvalId, approved, approver, note);
  report(`${tool} approval ${event.approvalId}: ${approved ? 'approved' : 'denied'} by ${printable(approver)} through the client (${answer.action})${outcome === 'applied' ? '' : `, refused: ${outcome}`}`);
}

/** The question: names the tool and the approval id; never the arguments (docs/approvals.md says why). */
export function approvalMessage(event: ApprovalRequested): string {
  return `The agent's call to the tool "${printable(event.tool)}" needs your approval (approval id ${event.approvalId}, call ${event.callId}). Approve it to let it run once with the arguments your client shows for this call, or deny it.`;
}

async function decide(ledger: LedgerApprovals, approvalId: string, approved: boolean, by: string, note: string | undefined): Promise<string> {
  try {
    // A note the ledger refuses (control characters) is dropped rather than losing the decision.
    const outcome = approved ? await approveWithNote(ledger, approvalId, by, note) : await denyWithReason(ledger, approvalId, by, note);
    return outcome.status === 'refused' ? outcome.reason : 'applied';
  } catch {
    return 'ledger unavailable';
  }
}

async function approveWithNote(ledger: LedgerApprovals, approvalId: string, by: string, note: string | undefined): ReturnType<LedgerApprovals['approve']> {
  if (note !== undefined) {
    try {
      return await ledger.approve(approvalId, { by, note });
    } catch (error) {
      if (!(error instanceof TypeError)) throw error;
    }
  }
  return ledger.approve(approvalId, { by });
}

async function denyWithReason(ledger: LedgerApprovals, approvalId: string, by: string, reason: string | undefined): ReturnType<LedgerApprovals['deny']> {
  if (reason !== undefined) {
    try {
      return await ledger.deny(approvalId, { by, reason });
    } catch (error) {
      if (!(error instanceof TypeError)) throw error;
    }
  }
  return ledger.deny(approvalId, { by });
}

// agent-tool-capabilities/ai-sdk: Vercel AI SDK (ai 6) tools behind the ledger; `ai` is an optional peer dependency.
export { ledgerTools, ledgerToolsWithApprovals, LedgerRejectionError, type LedgerToolsOptions, type LedgerToolsWithApprovals } from './ledgerTools';
export { LedgerApprovalError } from './toolApprovals';

// agent-tool-capabilities/ai-sdk: Vercel AI SDK (ai 6) tools behind the ledger; `ai` is an optional peer dependency.
export { ledgerTools, LedgerRejectionError, type LedgerToolsOptions } from './ledgerTools';

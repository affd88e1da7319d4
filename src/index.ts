// The public surface of agent-tool-capabilities.
export { createLedger, openLedger } from './createLedger';
export type { Ledger, LedgerOptions, ToolDefinition, ToolContext, IssueOptions, IssuedGrant, RevokeOptions, InvokeOutcome, InvokeOptions, KeyedInvokeOptions, KeyedInvokeOutcome, Usage, Budget, AttenuationRequest, AttenuateOutcome, RevokeDelegationOutcome, ResourceCall } from './stream/types';
export { replay } from './verification/replay';
export { verify, type VerifyResult, type VerifyProblem, type VerifyProblemCode, type VerifyOptions } from './verification/verify';
export { verifyParallel, type VerifyParallelOptions } from './verification/verifyParallel';
export { decide, checkAuthority, type Decision, type HostCommandErrorCode } from './domain/decide';
export { evolve } from './domain/evolve';
export { evolveBatch } from './domain/evolveBatch';
export { initialState, type LedgerState, type GrantRecord, type ToolRecord, type InFlightCall } from './domain/state';
export type { Command, AdmitCommand, IssueCommand, RevokeCommand, SettleCommand, RegisterToolCommand, AttenuateCommand, RevokeDelegationCommand, Narrowing, TimeoutCommand } from './domain/commands';
export { attenuationRejectReasons, revocationRejectReasons, delegationRejectMessage, type AttenuationRejectReason, type RevocationRejectReason } from './domain/delegationReasons';
export { chainAuthority, ancestorRecords, isDescendant } from './domain/grantChain';
export { rejectReasons, rejectMessage, isRejectReason, type RejectReason, type ArgumentCheck, type ResourceCheck } from './domain/reasons';
export type { LedgerEvent, EventPayload, EventType, EventOf, DecisionEvent, GrantScope, Amounts, ResourceTemplates } from './domain/events';
export type { GrantBudget, MeterAmounts, RateLimit, Reservation } from './domain/events';
export { genesisHash } from './domain/events';
export type { JsonValue, JsonObject } from './domain/json';
export { eventHash, sealEvent, sha256Hex } from './domain/chain';
export { canonicalJson } from './domain/canonicalJson';
export { isCanonicalResource, isCanonicalScope, scopeCovers, checkResources } from './domain/resources';
export { grantOf, grantsOf, grantIdOfToken, inFlightCallOf, inFlightCallsOf } from './domain/stateAccess';
export { limits } from './domain/limits';
export { meterNamePattern } from './domain/limits';
export { visibleTools, type VisibleTool } from './domain/visibleTools';
export { grantTree, type GrantTreeNode, type GrantStatus } from './domain/grantTree';
export { memoryStore } from './stores/memoryStore';
export { isSharedEventStore, isSnapshotEventStore, isAsyncEventStore, type EventStore, type SharedEventStore, type SnapshotEventStore, type AsyncEventStore } from './stream/ports/eventStore';
export { sqliteStore } from './stores/sqlite/lazySqliteStore';
export type { SqliteStoreOptions, SqliteEventStore, SqliteSynchronous } from './stores/sqlite/sqliteStoreOptions';
export { LedgerError, type LedgerErrorCode } from './errors';
export { InvalidCommandError } from './stream/invalidCommandError';
export { inputBytesOf } from './tools/arguments';
export { fsResource, fsScope, type FsResourceOptions } from './resources/fs/fsResource';
export { urlResource, urlScope } from './resources/url/urlResource';
export { ResourceRefusedError, type ResourceRefusalCode } from './resources/resourceRefusedError';
export type { CheckedOpenFlags } from './resources/fs/checkedFs';
export type { CheckedFetchInit, ResolveHost } from './resources/url/checkedFetch';
export { hopRefusalReasons, type HopRefusalReason } from './domain/fetchHop';
export type { LogFollower, FollowedLog } from './stream/types';
export type { PendingApprovalView, ApprovalRefusal, ApproveOptions, DenyOptions, ApproveOutcome, DenyOutcome, ApprovalEvent, LedgerApprovals } from './stream/approvalTypes';
export type { ApprovalRules, ApprovalOutcome, ApprovalRequestedPayload, ApprovalResolvedPayload } from './domain/events';
export type { ResolveApprovalCommand, ApprovalAsk } from './domain/commands';
export type { PendingApproval, ApprovalEnd } from './domain/state';
// Transparency (docs/transparency.md); everything else of it is in 'agent-tool-capabilities/transparency'.
export {
  checkpointPublisher,
  fileCheckpointSink,
  nodeCrypto,
  merkleHasher,
  MerkleTree,
  CompactFrontier,
  inclusionProof,
  consistencyProof,
  verifyInclusion,
  verifyConsistency,
  rootOfEventHashes,
  proveEvent,
  verifyEventProof,
  checkLogAgainstCheckpoint,
  eventLeaf,
  parseCheckpointBody,
  formatCheckpointBody,
  verifyCheckpoint,
  parseVerifierKey,
  parseSignerKey,
  generateSignerKey,
  formatSignerKey,
  formatVerifierKey,
  verifierKeyOf,
  signNote,
  verifyNote,
  parseTlogProof,
  formatTlogProof,
  cosignatureLine,
  cosignatureVerifier,
  type CheckpointPublisherOptions,
  type CheckpointSink,
  type PublishedCheckpoint,
  type Checkpoint,
  type TlogProof,
  type VerifierKey,
  type SignerKey,
  type TransparencyCrypto,
  type MerkleHasher,
} from './transparency';

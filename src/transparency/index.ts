// agent-tool-capabilities' transparency: the log as an RFC 9162 Merkle tree, C2SP checkpoints in
// signed notes, tlog-proof inclusion proofs, consistency proofs and tlog-cosignature witnesses.
// See docs/transparency.md. Every module here but nodeCrypto.ts (and the ledger publisher, which
// uses it by default) is free of Node APIs: pass `nodeCrypto` or your own TransparencyCrypto.
export type { TransparencyCrypto, TransparencySigner } from './crypto';
export { nodeCrypto } from './nodeCrypto';
export { toBase64, fromBase64, toHex, fromHex } from './bytes';
export { merkleHasher, rangeRootOfLeaves, type MerkleHasher } from './merkleHasher';
export { inclusionProof, consistencyProof, verifyInclusion, verifyConsistency, rootFromInclusionProof, type RangeRoot } from './proofs';
export { CompactFrontier, type FrontierJson } from './compactFrontier';
export { MerkleTree } from './merkleTree';
export { eventLeaf, rootOfEventHashes } from './eventLeaves';
export { parseNote, verifyNote, noteLimits, type ParsedNote, type NoteSignature, type NoteVerifier, type NoteVerifyResult, type NoteParseError } from './signedNote';
export {
  noteKeyId,
  parseVerifierKey,
  formatVerifierKey,
  parseSignerKey,
  formatSignerKey,
  generateSignerKey,
  verifierKeyOf,
  ed25519NoteVerifier,
  signNote,
  signatureTypes,
  type VerifierKey,
  type SignerKey,
} from './noteKeys';
export { formatCheckpointBody, parseCheckpointBody, verifyCheckpoint, type Checkpoint, type CheckpointVerifyResult } from './checkpoint';
export { cosignatureVerifier, cosignerVerifierKey, cosignatureLine } from './cosignature';
export { formatTlogProof, parseTlogProof, type TlogProof } from './tlogProof';
// The ledger side (node-only: it signs with node:crypto by default and the file sink writes files).
export { checkpointPublisher, CheckpointPublisher, integrationDelayMs, integrationQueueMax, type CheckpointPublisherOptions } from './checkpointPublisher';
export { fileCheckpointSink, type CheckpointSink, type PublishedCheckpoint } from './checkpointSink';
export { proveEvent, proveEventInTree, verifyEventProof, checkLogAgainstCheckpoint, checkpointOfNote, type ProveEventResult, type VerifyEventProofResult, type CheckLogResult } from './eventProofs';

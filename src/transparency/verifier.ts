// The browser-safe part of src/transparency: everything here is pure functions over Uint8Array and
// strings with the crypto passed in (no node: module is imported, directly or not; a test checks
// the import graph). A page bundles this entry with its own synchronous TransparencyCrypto.
export type { TransparencyCrypto } from './crypto';
export { toBase64, fromBase64, toHex, fromHex } from './bytes';
export { merkleHasher, rangeRootOfLeaves, type MerkleHasher } from './merkleHasher';
export { inclusionProof, consistencyProof, verifyInclusion, verifyConsistency, rootFromInclusionProof, type RangeRoot } from './proofs';
export { CompactFrontier, type FrontierJson } from './compactFrontier';
export { MerkleTree } from './merkleTree';
export { eventLeaf, rootOfEventHashes } from './eventLeaves';
export { parseNote, verifyNote, noteLimits, type ParsedNote, type NoteSignature, type NoteVerifier, type NoteVerifyResult } from './signedNote';
export { noteKeyId, parseVerifierKey, formatVerifierKey, ed25519NoteVerifier, signatureTypes, type VerifierKey } from './noteKeys';
export { formatCheckpointBody, parseCheckpointBody, verifyCheckpoint, type Checkpoint, type CheckpointVerifyResult } from './checkpoint';
export { cosignatureVerifier } from './cosignature';
export { formatTlogProof, parseTlogProof, type TlogProof } from './tlogProof';
export { proveEvent, proveEventInTree, verifyEventProof, checkLogAgainstCheckpoint, checkpointOfNote, type ProveEventResult, type VerifyEventProofResult, type CheckLogResult } from './eventProofs';

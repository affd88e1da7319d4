import { fromBase64, parseDecimal, toBase64 } from './bytes';
import { hashBytes } from './merkleHasher';
import { proofHashesMax } from './proofs';
import { noteLimits } from './signedNote';

/** A C2SP tlog-proof (c2sp.org/tlog-proof@v1): an inclusion proof that carries its signed checkpoint. */
export interface TlogProof {
  /** Opaque, unauthenticated extra data (here: the 32-byte event hash, the leaf). */
  readonly extra: Uint8Array | undefined;
  /** Zero-based leaf index (here: seq − 1). */
  readonly index: number;
  /** Inclusion proof hashes, from the leaf's sibling up. */
  readonly proof: readonly Uint8Array[];
  /** The signed checkpoint, verbatim. */
  readonly checkpoint: string;
}

const header = 'c2sp.org/tlog-proof@v1';

export function formatTlogProof(proof: TlogProof): string {
  const lines = [header];
  if (proof.extra !== undefined) lines.push(`extra ${toBase64(proof.extra)}`);
  lines.push(`index ${proof.index}`);
  for (const hash of proof.proof) lines.push(toBase64(hash));
  return `${lines.join('\n')}\n\n${proof.checkpoint}`;
}

/** Parses a tlog-proof; undefined when the text is not one (the checkpoint is not verified here). */
export function parseTlogProof(text: string): TlogProof | undefined {
  if (typeof text !== 'string' || text.length > noteLimits.noteBytesMax + 16_384) return undefined;
  const split = text.indexOf('\n\n');
  if (split < 0) return undefined;
  const lines = text.slice(0, split).split('\n');
  const checkpoint = text.slice(split + 2);
  if (lines[0] !== header || checkpoint.length === 0) return undefined;
  let at = 1;
  let extra: Uint8Array | undefined;
  if (lines[at]?.startsWith('extra ')) {
    extra = fromBase64((lines[at] as string).slice('extra '.length));
    if (extra === undefined) return undefined;
    at++;
  }
  const indexLine = lines[at];
  const index = indexLine?.startsWith('index ') ? parseDecimal(indexLine.slice('index '.length)) : undefined;
  if (index === undefined) return undefined;
  const hashes = lines.slice(at + 1);
  if (hashes.length > proofHashesMax) return undefined;
  const proof: Uint8Array[] = [];
  for (const line of hashes) {
    const hash = fromBase64(line);
    if (hash === undefined || hash.length !== hashBytes) return undefined;
    proof.push(hash);
  }
  return { extra, index, proof, checkpoint };
}

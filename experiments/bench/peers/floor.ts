import { canonicalJson, sha256Hex, genesisHash } from '../../../src';
import { policy, type ReadArgs } from '../policy';

interface FloorGrant {
  readonly grantId: string;
  readonly tools: readonly string[];
  readonly prefix: string;
  readonly lengthMax: number;
  readonly expiresAt: number;
  readonly calls: number;
  readonly bytes: number;
  usedCalls: number;
  usedBytes: number;
}

/**
 * What the hardware allows for the same work, hand-written: a Map lookup of the grant, the same
 * checks (tool, validity, argument types and limit, path prefix), two budgets, and two hash-chained
 * events per call, canonicalized (RFC 8785) and hashed with the same functions the ledger uses.
 * No queue, no promises, no schema engine, no immutability.
 */
export function floor(): { call(token: string, args: ReadArgs): boolean; readonly log: unknown[]; addGrant(token: string): void } {
  const grants = new Map<string, FloorGrant>();
  const log: unknown[] = [];
  let head = { seq: 0, hash: genesisHash };
  let calls = 0;
  const append = (payload: Record<string, unknown>, at: number): void => {
    const unhashed = { ...payload, seq: head.seq + 1, at, prevHash: head.hash };
    const hash = sha256Hex(canonicalJson(unhashed));
    log.push({ ...unhashed, hash });
    head = { seq: unhashed.seq, hash };
  };
  return {
    log,
    addGrant(token) {
      grants.set(token, { grantId: `g_${grants.size}`, tools: [policy.tool], prefix: policy.pathPrefix, lengthMax: policy.lengthMax, expiresAt: Date.now() + 86_400_000, calls: policy.callsBudget, bytes: policy.bytesBudget, usedCalls: 0, usedBytes: 0 });
    },
    call(token, args) {
      const at = Date.now();
      const grant = grants.get(token);
      if (grant === undefined || at >= grant.expiresAt || !grant.tools.includes(policy.tool)) return false;
      if (typeof args.path !== 'string' || !Number.isInteger(args.length) || args.length < 0 || args.length > grant.lengthMax) return false;
      if (!args.path.startsWith(grant.prefix) || args.path.includes('..')) return false;
      const bytes = Buffer.byteLength(canonicalJson(args), 'utf8');
      if (grant.usedCalls + 1 > grant.calls || grant.usedBytes + bytes > grant.bytes) return false;
      grant.usedCalls += 1;
      grant.usedBytes += bytes;
      const callId = `c_${++calls}`;
      append({ type: 'call.admitted', callId, grantId: grant.grantId, tool: policy.tool, reserved: { calls: 1, inputBytes: bytes } }, at);
      append({ type: 'call.completed', callId, grantId: grant.grantId, tool: policy.tool }, at);
      return true;
    },
  };
}

import { isDeepStrictEqual } from 'node:util';
import type { LedgerEvent } from '../domain/events';
import { verify } from '../verification/verify';
import { sequentialCases } from './sequentialCases';
import { claims, raceSetup, revocationOrder } from './claims';
import { LogIndex } from './logIndex';
import { evidenceShapeProblems } from './schema';
import { summarize } from './summarize';
import { summaryRows } from './summaryTable';
import { evidenceSchemaVersion, logNames, type ConcurrencyRecord, type Evidence, type RevocationRecord, type Summary } from './types';

export interface EvidenceProblem {
  /** Where in the file: `logs.sequential`, `cases[4]`, `summary.concurrencyCalls`… */
  readonly where: string;
  /** The event's seq, when the problem is about one event. */
  readonly seq?: number;
  readonly message: string;
}

export interface EvidenceReport {
  readonly ok: boolean;
  /** One line per check that ran, saying what it covered. */
  readonly checks: readonly string[];
  readonly problems: readonly EvidenceProblem[];
  /** The summary recomputed from the logs (absent when the file could not be read that far). */
  readonly recomputed?: Summary;
}

class Findings {
  readonly checks: string[] = [];
  readonly problems: EvidenceProblem[] = [];
  check(line: string): void {
    this.checks.push(line);
  }
  problem(where: string, message: string, seq?: number): void {
    this.problems.push(seq === undefined ? { where, message } : { where, seq, message });
  }
  report(recomputed?: Summary): EvidenceReport {
    return { ok: this.problems.length === 0, checks: this.checks, problems: this.problems, ...(recomputed ? { recomputed } : {}) };
  }
}

const sameSet = (a: readonly string[], b: readonly string[]): boolean => isDeepStrictEqual([...a].sort(), [...b].sort());
const outcomeOf = (type: string): string => (type === 'call.admitted' ? 'admitted' : 'rejected');

function checkHeader(e: Evidence, f: Findings): void {
  if (e.schemaVersion !== evidenceSchemaVersion) f.problem('schemaVersion', `unknown schema version ${e.schemaVersion} (this verifier reads ${evidenceSchemaVersion})`);
  if (Number.isNaN(Date.parse(e.createdAt))) f.problem('createdAt', 'not a valid date');
  const paths = Object.keys(e.sourceHashes);
  for (const root of ['src/', 'experiments/']) if (!paths.some((p) => p.startsWith(root))) f.problem('sourceHashes', `no file under ${root} is hashed`);
  const state = e.revision.commit === null ? 'no git commit recorded' : `commit ${e.revision.commit}, ${e.revision.dirty === true ? 'dirty tree' : e.revision.dirty === false ? 'clean tree' : 'tree state unknown'}`;
  f.check(`header: schema version ${e.schemaVersion}, created ${e.createdAt}, ${state}, ${paths.length} source hashes well formed, hardware ${e.hardware.cpuCount} × ${e.hardware.cpuModel}, Node ${e.hardware.node}`);
}

function checkLogs(e: Evidence, f: Findings): void {
  for (const name of logNames) {
    const log = e.logs[name];
    if (log.length === 0) f.problem(`logs.${name}`, 'the log is empty');
    const result = verify(log);
    for (const p of result.problems) f.problem(`logs.${name}`, `${p.code}: ${p.message}`, p.seq);
    f.check(`logs.${name}: ${result.checked} events, sequence, hash chain and every decision re-derived${result.ok ? '' : ` (${result.problems.length} problems)`}`);
  }
}

function checkCases(e: Evidence, f: Findings): void {
  const log = new LogIndex(e.logs.sequential);
  if (e.cases.length !== sequentialCases.length) f.problem('cases', `expected ${sequentialCases.length} cases, found ${e.cases.length}`);
  const claimed = new Set<string>();
  e.cases.forEach((c, i) => {
    const where = `cases[${i}] ${c.name}`;
    const definition = sequentialCases[i];
    if (definition === undefined || definition.name !== c.name || definition.kind !== c.kind || definition.tool !== c.tool || !isDeepStrictEqual(definition.expected, c.expected)) {
      f.problem(where, 'name, kind, tool or expected outcome differs from the experiment\'s case table');
    }
    if (claimed.has(c.observed.callId)) f.problem(where, 'callId used by an earlier case');
    claimed.add(c.observed.callId);
    const decision = log.decisions.get(c.observed.callId);
    if (decision === undefined) return f.problem(where, 'no decision for its callId in logs.sequential');
    const loggedReason = decision.type === 'call.rejected' ? decision.reason : undefined;
    if (outcomeOf(decision.type) !== c.observed.outcome || loggedReason !== c.observed.reason) {
      f.problem(where, `observed ${c.observed.outcome}${c.observed.reason ? ` (${c.observed.reason})` : ''} but the log has ${decision.type}${loggedReason ? ` (${loggedReason})` : ''}`, decision.seq);
    }
    if (c.expected.outcome !== c.observed.outcome || c.expected.reason !== c.observed.reason) {
      f.problem(where, `expected ${c.expected.outcome}${c.expected.reason ? ` (${c.expected.reason})` : ''}, observed ${c.observed.outcome}${c.observed.reason ? ` (${c.observed.reason})` : ''}`, decision.seq);
    }
    const settlement = log.settlements.get(c.observed.callId);
    if (decision.type === 'call.rejected') {
      if (settlement !== undefined) f.problem(where, 'a rejected call has a settlement event: its tool ran', settlement.seq);
      if (c.toolRuns !== 0) f.problem(where, `a rejected call started ${c.toolRuns} tool run(s)`, decision.seq);
      if (c.storeDigestBefore !== c.storeDigestAfter) f.problem(where, 'a rejected call changed the notes store digest', decision.seq);
    } else {
      const settledAs = c.observed.status === 'completed' ? 'call.completed' : 'call.failed';
      if (settlement?.type !== settledAs) f.problem(where, `status ${c.observed.status} but the log has ${settlement?.type ?? 'no settlement'}`, decision.seq);
      if (c.toolRuns !== 1) f.problem(where, `an admitted call ran its tool ${c.toolRuns} times`, decision.seq);
    }
  });
  for (const d of log.decisions.values()) if (!claimed.has(d.callId)) f.problem('logs.sequential', 'a decision no case accounts for', d.seq);
  f.check(`cases: ${e.cases.length} cases match the case table, each observed outcome matches its logged decision, rejected calls left no tool run, settlement or store change`);
}

function checkRace(name: 'calls' | 'bytes', record: ConcurrencyRecord, events: readonly LedgerEvent[], f: Findings): void {
  const where = `concurrency.${name}`;
  const log = new LogIndex(events);
  const total = record.workers * record.attemptsPerWorker;
  if (record.attempts.length !== total) f.problem(where, `${record.attempts.length} attempts recorded, ${record.workers} × ${record.attemptsPerWorker} = ${total} expected`);
  const slots = new Set(record.attempts.map((a) => `${a.worker}/${a.attempt}`));
  const slotsValid = record.attempts.every((a) => a.worker < record.workers && a.attempt < record.attemptsPerWorker);
  if (slots.size !== record.attempts.length || !slotsValid) f.problem(where, 'attempts do not cover each worker × attempt exactly once');
  if (record.workers !== raceSetup.workers || record.attemptsPerWorker !== raceSetup.attemptsPerWorker || record.expected.admitted !== raceSetup.admitted) {
    f.problem(where, `the run is not ${raceSetup.workers} threads × ${raceSetup.attemptsPerWorker} attempts against a budget for ${raceSetup.admitted}`);
  }
  const budgetFits =
    name === 'calls'
      ? record.expected.reason === 'call_budget_exhausted' && record.budget.calls === record.expected.admitted && record.budget.inputBytes >= total * record.inputBytesPerCall
      : record.expected.reason === 'byte_budget_exhausted' && record.budget.inputBytes === record.expected.admitted * record.inputBytesPerCall && record.budget.calls >= total;
  if (!budgetFits) f.problem(where, `the budget does not make this a ${name === 'calls' ? 'call' : 'byte'} budget race for exactly ${record.expected.admitted}`);
  const grant = log.grants.get(record.grantId);
  if (grant === undefined) f.problem(where, 'the grant is not issued in the log');
  else if (!isDeepStrictEqual(grant.scope.budget, record.budget)) f.problem(where, 'the recorded budget differs from the issued grant', grant.seq);
  const seen = new Set<string>();
  for (const a of record.attempts) {
    const decision = log.decisions.get(a.callId);
    if (seen.has(a.callId)) f.problem(where, `worker ${a.worker} attempt ${a.attempt}: callId recorded twice`);
    seen.add(a.callId);
    if (decision === undefined || decision.grantId !== record.grantId) {
      f.problem(where, `worker ${a.worker} attempt ${a.attempt}: no decision on this grant for its callId`);
      continue;
    }
    const loggedReason = decision.type === 'call.rejected' ? decision.reason : undefined;
    if (outcomeOf(decision.type) !== a.outcome || loggedReason !== a.reason) f.problem(where, `worker ${a.worker} attempt ${a.attempt}: recorded ${a.outcome} but the log has ${decision.type}`, decision.seq);
    if (decision.type === 'call.rejected' && decision.reason !== record.expected.reason) f.problem(where, `rejected ${decision.reason}, expected ${record.expected.reason}`, decision.seq);
    if (decision.type === 'call.admitted' && decision.reserved.inputBytes !== record.inputBytesPerCall) f.problem(where, `reserved ${decision.reserved.inputBytes} bytes, every attempt has ${record.inputBytesPerCall}`, decision.seq);
  }
  const decisions = log.decisionsFor(record.grantId);
  for (const d of decisions) if (!seen.has(d.callId)) f.problem(where, 'a decision no attempt accounts for', d.seq);
  const admitted = decisions.filter((d) => d.type === 'call.admitted').map((d) => d.callId);
  const completed = Array.from(log.settlements.values()).filter((s) => s.type === 'call.completed').map((s) => s.callId);
  if (!sameSet(admitted, completed)) f.problem(where, 'completed calls differ from admitted calls');
  if (!sameSet(admitted, record.effectCallIds)) f.problem(where, `store effects (${record.effectCallIds.length}) do not match admissions (${admitted.length}) one for one`);
  if (record.store.notesAfter - record.store.notesBefore !== admitted.length) f.problem(where, `the store gained ${record.store.notesAfter - record.store.notesBefore} notes for ${admitted.length} admissions`);
  if (admitted.length !== record.expected.admitted || decisions.length - admitted.length !== record.expected.rejected) {
    f.problem(where, `expected ${record.expected.admitted} admitted and ${record.expected.rejected} rejected, the log has ${admitted.length} and ${decisions.length - admitted.length}`);
  }
  f.check(`${where}: ${decisions.length} logged decisions match ${record.attempts.length} recorded attempts (${record.workers} threads × ${record.attemptsPerWorker}); admissions, completions and store effects match one for one`);
}

function checkRevocation(name: 'complete' | 'abort', record: RevocationRecord, events: readonly LedgerEvent[], f: Findings): void {
  const where = `revocation.${name}`;
  const log = new LogIndex(events);
  const expectedOrder = revocationOrder[name];
  const steps = events.filter(
    (e) =>
      (e.type === 'grant.revoked' && e.grantId === record.grantId) ||
      ((e.type === 'call.admitted' || e.type === 'call.completed' || e.type === 'call.failed') && e.callId === record.admittedCallId) ||
      (e.type === 'call.rejected' && e.callId === record.laterCallId),
  );
  const order = steps.map((e) => e.type);
  if (!isDeepStrictEqual(order, [...expectedOrder])) f.problem(where, `the log orders the steps ${order.join(' → ')}, expected ${expectedOrder.join(' → ')}`, steps[0]?.seq);
  if (!isDeepStrictEqual(order, record.order)) f.problem(where, `recorded order ${record.order.join(' → ')} differs from the log's`);
  const revoked = log.revocations.get(record.grantId);
  if (record.abortInFlight !== (name === 'abort') || revoked?.abortInFlight !== record.abortInFlight) f.problem(where, 'abortInFlight differs between the run, the record and the log', revoked?.seq);
  if (record.laterOutcome !== 'rejected' || record.laterReason !== 'revoked') f.problem(where, `the later call is recorded ${record.laterOutcome}${record.laterReason ? ` (${record.laterReason})` : ''}, expected rejected (revoked)`);
  const expectedStatus = name === 'abort' ? 'failed' : 'completed';
  if (record.admittedStatus !== expectedStatus) f.problem(where, `the admitted call is recorded ${record.admittedStatus}, expected ${expectedStatus}`);
  const effects = name === 'abort' ? [] : [record.admittedCallId];
  if (!isDeepStrictEqual(record.effectCallIds, effects)) f.problem(where, `store effects by ${record.effectCallIds.length} call(s), expected ${effects.length}`);
  if (name === 'abort' && record.store.digestBefore !== record.store.digestAfter) f.problem(where, 'the aborted call changed the store');
  f.check(`${where}: log order ${order.join(' → ')}${name === 'abort' ? `, abort observed by the tool: ${record.abortObserved}` : ''}`);
}

function diffSummary(where: string, actual: Summary, wanted: Summary, f: Findings, what: string): void {
  const a = summaryRows(actual);
  const w = summaryRows(wanted);
  a.forEach(([check, text], i) => {
    const other = (w[i] as [string, string])[1];
    if (text !== other) f.problem(where, `${check}: ${what} ${other}, recomputed from the logs ${text}`);
  });
  // Rows render every field; a difference they hide (none today) would still be caught here.
  if (!isDeepStrictEqual(actual, wanted) && a.every(([, t], i) => t === (w[i] as [string, string])[1])) f.problem(where, `${what} differs from the summary recomputed from the logs`);
}

/**
 * Checks an evidence file end to end: its shape, every log with the library's `verify` (sequence,
 * chain, re-derived decisions), every record against its log, the summary recomputed from the logs
 * against the stored one, and the recomputed summary against the published claims.
 */
export function verifyEvidence(doc: unknown): EvidenceReport {
  const f = new Findings();
  const shape = evidenceShapeProblems(doc);
  for (const p of shape) f.problem('shape', p);
  if (shape.length > 0) return f.report();
  f.check('shape: every required field present with the right type (no unknown fields)');
  const e = doc as Evidence;
  checkHeader(e, f);
  checkLogs(e, f);
  checkCases(e, f);
  checkRace('calls', e.concurrency.calls, e.logs.concurrencyCalls, f);
  checkRace('bytes', e.concurrency.bytes, e.logs.concurrencyBytes, f);
  checkRevocation('complete', e.revocation.complete, e.logs.revocation, f);
  checkRevocation('abort', e.revocation.abort, e.logs.revocationAbort, f);
  const recomputed = summarize(e);
  diffSummary('summary', recomputed, e.summary, f, 'the file says');
  f.check('summary: recomputed from the logs and compared with the stored table');
  diffSummary('claims', recomputed, claims, f, 'the claim is');
  f.check("claims: the seed's 25 cases 3/3 admitted, 22/22 rejected, 0/22 modified; the 6 added since 2/2, 4/4, 0/4; 7/57 and 7/57 under concurrency; revocation order");
  return f.report(recomputed);
}

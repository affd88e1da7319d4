import { AuditModel } from './auditModel';
import { ChainVerifier, parseEvent, webCryptoSha256, type IntegrityStatus, type Parsed } from './chainVerifier';
import { CheckpointWatcher } from './checkpoint';
import type { DecisionFilter } from './filters';
import type { GrantTreeNode } from '../../domain/grantTree';
import { auditForest, subtreeIds } from './forest';
import { parseEventsData, type ReceivedEvent } from './logLines';
import { drawBudgets } from './ui/budgetsPanel';
import { DecisionsTable } from './ui/decisionsTable';
import { byId, formatCount } from './ui/dom';
import { FilterBar } from './ui/filterBar';
import { drawGrantTree } from './ui/grantTreePanel';
import { drawIntegrity } from './ui/integrityPanel';
import { ReasonsChart } from './ui/reasonsChart';
import { browserTransparencyCrypto } from './transparencyCrypto';

/** The slower panels (budgets, tree, chart) redraw at most this often while events pour in. */
const panelRedrawMs = 300;
/**
 * The sweep re-reads the log from the start, one page per this many ms, and starts over this long
 * after reaching the verified head: an event edited or removed after the page verified it is
 * reported within one sweep (docs/audit.md), without a reload.
 */
const sweepPageMs = 100;
const sweepRestMs = 1_000;
/** Rows asked per /bodies page (at most the server's streamPageEventsMax): fewer means the log ends there. */
const sweepPageRows = 500;

const model = new AuditModel();
const sha256 = webCryptoSha256();
const verifier = sha256 === undefined ? undefined : new ChainVerifier(sha256);
let integrity: IntegrityStatus | 'unavailable' = verifier === undefined ? 'unavailable' : verifier.status();
let checkpoint: CheckpointWatcher | undefined;
let received = 0;
let lastSeq = 0;
let verifying: Promise<void> = Promise.resolve();

const table = new DecisionsTable(byId('decisions'), model);
const chart = new ReasonsChart(byId('reasons-chart'));
const filters = new FilterBar(model, (filter) => {
  currentFilter = filter;
  table.setFilter(filter);
  schedule(true);
});
let currentFilter: DecisionFilter = filters.current();

function accept(batch: readonly ReceivedEvent[]): void {
  const fresh = batch.filter((e) => e.seq > lastSeq);
  if (fresh.length === 0) return;
  lastSeq = (fresh[fresh.length - 1] as ReceivedEvent).seq;
  received += fresh.length;
  const parsed: { received: ReceivedEvent; parsed: Parsed }[] = fresh.map((e) => ({ received: e, parsed: parseEvent(e) }));
  for (const { received: e, parsed: p } of parsed) if ('event' in p) model.add(e.seq, p.event, e.text as string);
  if (verifier !== undefined) {
    verifying = verifying.then(async () => {
      integrity = await verifier.push(parsed);
      schedule();
    });
  }
  schedule();
}

// Rate windows slide and call deadlines count down with the clock: redraw the panels every second
// while any grant has a window or any running call a deadline.
setInterval(() => {
  if (model.rateWindows || model.hasDeadlines()) schedule();
}, 1_000);

let frame = 0;
let panelsDrawnAt = 0;
let panelsDue = false;
function schedule(panelsNow = false): void {
  panelsDue = true;
  if (panelsNow) panelsDrawnAt = 0;
  if (frame === 0) frame = requestAnimationFrame(render);
}

function render(): void {
  frame = 0;
  table.update();
  byId('row-count').textContent = `${formatCount(table.count())} of ${formatCount(model.decisions.length)} decisions`;
  byId('event-count').textContent = `${formatCount(received)} events`;
  advanceCheckpoint();
  drawIntegrity(byId('integrity'), integrity, received, checkpoint?.status());
  const now = performance.now();
  if (panelsDue && now - panelsDrawnAt >= panelRedrawMs) {
    panelsDue = false;
    panelsDrawnAt = now;
    filters.refreshOptions();
    const wallNow = Date.now();
    const forest = auditForest(model, wallNow);
    const inFlight = subtreeInFlight(forest.roots, model.inFlightByGrant());
    drawBudgets(byId('budgets'), model, forest, inFlight, currentFilter.grant, wallNow);
    drawGrantTree(byId('grant-tree'), model, forest, inFlight, (grantId) => filters.apply({ ...currentFilter, grant: grantId }));
    chart.update(model.rejections);
  } else if (panelsDue) setTimeout(() => schedule(), panelRedrawMs);
}

/** In-flight amounts of each grant's whole subtree (a child's running call holds its ancestors' budget too). */
function subtreeInFlight(forest: readonly GrantTreeNode[], own: Map<string, Record<string, unknown>>): Map<string, Record<string, unknown>> {
  const rolled = new Map<string, Record<string, unknown>>();
  const walk = (node: GrantTreeNode): void => {
    const sum: Record<string, number> = {};
    for (const id of subtreeIds(node)) for (const [k, v] of Object.entries(own.get(id) ?? {})) if (typeof v === 'number') sum[k] = (sum[k] ?? 0) + v;
    rolled.set(node.grantId, sum);
    node.children.forEach(walk);
  };
  forest.forEach(walk);
  // A grant the tree could not place still shows its own running calls.
  for (const [id, amounts] of own) if (!rolled.has(id)) rolled.set(id, amounts);
  return rolled;
}

/** Folds newly verified hashes into the checkpoint check (a bounded number per call, then again). */
function advanceCheckpoint(): void {
  if (checkpoint === undefined || integrity === 'unavailable') return;
  checkpoint.advance(integrity.hashes, integrity.firstBad !== undefined);
  if (checkpoint.hasWork(integrity.hashes.length)) schedule();
}

async function loadCheckpoint(): Promise<void> {
  const response = await fetch('/checkpoint.json', { cache: 'no-store' });
  if (!response.ok) return;
  const files = (await response.json()) as { note?: unknown; verifierKey?: unknown };
  if (typeof files.note !== 'string' || typeof files.verifierKey !== 'string') return;
  checkpoint = new CheckpointWatcher(files.note, files.verifierKey, browserTransparencyCrypto);
  schedule(true);
}

function connect(): void {
  const source = new EventSource('/events');
  const status = byId('connection');
  source.addEventListener('events', (message) => accept(parseEventsData((message as MessageEvent<string>).data)));
  source.addEventListener('caughtUp', () => {
    status.textContent = 'live';
    status.dataset.state = 'live';
  });
  source.addEventListener('error', () => {
    status.textContent = source.readyState === EventSource.CLOSED ? 'disconnected' : 'reconnecting…';
    status.dataset.state = 'down';
  });
}

byId('export').addEventListener('click', () => {
  const rows = table.filteredRows();
  const blob = new Blob(rows.map((r) => `${r.text}\n`), { type: 'application/x-ndjson' });
  const link = document.createElement('a');
  link.href = URL.createObjectURL(blob);
  link.download = 'decisions.jsonl';
  link.click();
  setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
});

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Re-checks every verified event against the log as it is now, over and over (see sweepPageMs). */
async function sweep(): Promise<void> {
  const chain = verifier;
  if (chain === undefined) return;
  for (;;) {
    let after = 0;
    while (after < chain.status().verifiedThrough) {
      let rows: ReceivedEvent[];
      try {
        const response = await fetch(`/bodies?after=${after}&limit=${sweepPageRows}`, { cache: 'no-store' });
        if (!response.ok) break;
        rows = parseEventsData(await response.text());
      } catch {
        break; // the server is away: the stream shows it; try again next sweep
      }
      const from = after;
      verifying = verifying.then(async () => {
        integrity = await chain.recheck(from, rows, sweepPageRows);
        schedule();
      });
      await verifying;
      if (rows.length === 0) break;
      after = (rows[rows.length - 1] as ReceivedEvent).seq;
      await pause(sweepPageMs);
    }
    await pause(sweepRestMs);
  }
}

filters.apply(currentFilter, false);
void loadCheckpoint();
connect();
void sweep();

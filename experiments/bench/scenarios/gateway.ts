import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createLedger, sqliteStore } from '../../../src';
import { figures, now, round, type Figures } from '../stats';
import { scratchDir } from '../tmpFiles';
import type { BenchContext, ScenarioResult } from './types';

const dist = path.resolve(__dirname, '../../..');
const cli = path.join(dist, 'src/cli/main.js');
const peer = path.join(dist, 'experiments/bench/peers/httpMcp.js');
const sessionsCount = 64;
const idleSessions = 200;
/** The paced rounds' offered load: 64 sessions × one call per 640 ms = 100 calls/s, well below both sides' capacity. */
const pacedIntervalMs = 640;
/**
 * Calls per session in one paced round (64 × 15 = 960 calls, 9.6 s): with 6, the added median moved
 * from 0.26 to 1.55 ms between runs of the same code, the difference of two ≈ 5 ms medians.
 */
const pacedCallsPerSession = 15;
/**
 * A RAM-backed filesystem, where fsync returns at once: the same gateway with its ledger there shows
 * what a call adds when the disk's flush costs nothing (a measurement, not a way to run: a ledger
 * there does not survive a power loss or a reboot).
 */
const tmpfs = '/dev/shm';

interface Running {
  readonly child: ChildProcess;
  readonly url: URL;
  stop(): void;
}

/** Starts a process that prints `listening [on] <url>` once it serves. */
async function started(args: string[]): Promise<Running> {
  const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'ignore'], env: { PATH: process.env.PATH ?? '' } });
  const url = await new Promise<URL>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const m = /listening (?:on )?(\S+)/.exec(out);
      if (m !== null) resolve(new URL(m[1] as string));
    });
    child.once('exit', (code) => reject(new Error(`${path.basename(args[0] ?? '')} exited (${code})`)));
  });
  return { child, url, stop: () => void child.kill('SIGTERM') };
}

async function connect(url: URL, bearer?: string): Promise<Client> {
  const client = new Client({ name: 'bench-agent', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: bearer === undefined ? {} : { authorization: `Bearer ${bearer}` } } }));
  return client;
}

async function call(client: Client, i: number): Promise<void> {
  const result = await client.callTool({ name: 'echo', arguments: { text: `call ${i}` } });
  if (result.isError === true) throw new Error(`call ${i} failed: ${JSON.stringify(result.content)}`);
}

/** Every session calls `perSession` times in a row, all sessions at once; one latency per call. */
async function load(clients: readonly Client[], perSession: number): Promise<Figures> {
  const lat = new Float64Array(clients.length * perSession);
  const t0 = now();
  await Promise.all(
    clients.map(async (client, s) => {
      for (let i = 0; i < perSession; i++) {
        const t = now();
        await call(client, i);
        lat[s * perSession + i] = now() - t;
      }
    }),
  );
  return figures(lat, now() - t0);
}

/**
 * Open loop: every session calls once per `intervalMs`, sessions spread evenly over the interval, so
 * the offered rate (sessions ÷ interval) stays fixed whatever either side's speed. Below both sides'
 * capacity a call's latency is its own cost, not time queued behind the other 63 sessions' calls.
 */
async function pacedLoad(clients: readonly Client[], perSession: number, intervalMs: number): Promise<Figures> {
  const lat = new Float64Array(clients.length * perSession);
  const t0 = now();
  const wait = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
  await Promise.all(
    clients.map(async (client, s) => {
      const offsetMs = (s * intervalMs) / clients.length;
      for (let i = 0; i < perSession; i++) {
        await wait(offsetMs + i * intervalMs - (now() - t0) / 1e6);
        const t = now();
        await call(client, i);
        lat[s * perSession + i] = now() - t;
      }
    }),
  );
  return figures(lat, now() - t0);
}

function rssKiB(pid: number | undefined): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? Number.NaN);
  } catch {
    return Number.NaN;
  }
}

/**
 * Resident memory added per idle session (initialized, no call yet), KiB: the least-squares slope of
 * resident memory over open sessions, read five times from `idleSessions` to four times as many
 * (steps of `idleSessions`, then of half that), so the heap's first growth (which the first sessions
 * pay for all) is left out, and one garbage collection shrinking the heap between two readings does
 * not decide the figure (a single difference read anything from -230 to 240 KiB).
 */
async function idleSessionKiB(url: URL, pid: number | undefined, bearer?: string): Promise<{ kib: number; stdErr: number }> {
  const open = (n: number): Promise<Client[]> => Promise.all(Array.from({ length: n }, () => connect(url, bearer)));
  const clients: Client[] = [];
  const points: { sessions: number; kib: number }[] = [];
  for (let step = 1; step <= 3; step++) {
    clients.push(...(await open(idleSessions)));
    points.push({ sessions: clients.length, kib: rssKiB(pid) });
  }
  for (let step = 0; step < 2; step++) {
    clients.push(...(await open(idleSessions / 2)));
    points.push({ sessions: clients.length, kib: rssKiB(pid) });
  }
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  const fit = slope(points.map((p) => p.sessions), points.map((p) => p.kib));
  return { kib: round(fit.slope, 1), stdErr: round(fit.stdErr, 1) };
}

/** Least-squares slope of y over x, with its standard error (how much the readings' scatter leaves it unsure). */
function slope(x: readonly number[], y: readonly number[]): { slope: number; stdErr: number } {
  const mean = (v: readonly number[]): number => v.reduce((a, b) => a + b, 0) / v.length;
  const mx = mean(x);
  const my = mean(y);
  let num = 0;
  let den = 0;
  x.forEach((xi, i) => {
    num += (xi - mx) * ((y[i] as number) - my);
    den += (xi - mx) ** 2;
  });
  const b = num / den;
  const residuals = x.reduce((sum, xi, i) => sum + ((y[i] as number) - (my + b * (xi - mx))) ** 2, 0);
  return { slope: b, stdErr: Math.sqrt(residuals / (x.length - 2) / den) };
}

const medianOf = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

/** An `atc gateway` over `upstream` with its SQLite ledger in `scratch`, and a capability token of its ledger. */
async function startGateway(scratch: { file(name: string): string }, upstream: URL): Promise<{ gw: Running; token: string }> {
  const config = { ledger: scratch.file('gateway.sqlite'), listen: '127.0.0.1:0', publicUrl: 'http://127.0.0.1:0/mcp', upstreams: { up: { url: upstream.href } }, toolNames: 'plain', auth: { tokens: true }, limits: { sessionsMax: 5 * idleSessions } }; // 4 × idleSessions open at the memory step
  writeFileSync(scratch.file('gateway.json'), JSON.stringify(config));
  const gw = await started([cli, 'gateway', '--quiet', '--config', scratch.file('gateway.json')]);
  const ledger = createLedger({ store: sqliteStore({ path: scratch.file('gateway.sqlite') }) });
  const { token } = await ledger.issue({ tools: ['echo'], expiresAt: Date.now() + 3_600_000, budget: { calls: 100_000_000, inputBytes: 100_000_000_000 } });
  await ledger.close();
  return { gw, token };
}

/**
 * Scenario 15: `atc gateway` (durable SQLite ledger, a capability token) in front of a no-op HTTP
 * upstream, against a plain pass-through on the same SDK and transport (an upstream client per
 * session, no ledger), 64 concurrent Streamable HTTP sessions each calling in a row; the two
 * alternate rounds in the same run. Also one session calling alone, 64 paced, and memory per idle
 * session; alone and paced, also the same gateway with its ledger on tmpfs (the disk flush's share).
 */
export async function gateway(ctx: BenchContext): Promise<ScenarioResult> {
  const scratch = scratchDir('gateway');
  const rounds = ctx.quick ? 2 : 4;
  const perSession = ctx.quick ? 10 : 12;
  const loadAtStart = os.loadavg().map((l) => round(l, 2));
  const echo = await started([peer, 'echo']);
  const plain = await started([peer, 'plain', echo.url.href]);
  const { gw, token } = await startGateway(scratch, echo.url);
  const ramScratch = existsSync(tmpfs) ? scratchDir('gateway-tmpfs', tmpfs) : undefined;
  const ram = ramScratch === undefined ? undefined : await startGateway(ramScratch, echo.url);
  const clients: Client[] = [];
  try {
    const sessions = (url: URL, bearer?: string): Promise<Client[]> => Promise.all(Array.from({ length: sessionsCount }, () => connect(url, bearer)));
    const sides = { plain: await sessions(plain.url), gateway: await sessions(gw.url, token), tmpfs: ram === undefined ? [] : await sessions(ram.gw.url, ram.token) };
    clients.push(...sides.plain, ...sides.gateway, ...sides.tmpfs);
    for (const side of [sides.plain, sides.gateway, sides.tmpfs]) await load(side, 20); // warm-up: connections, JIT
    const many: { plain: Figures[]; gateway: Figures[] } = { plain: [], gateway: [] };
    const one: { plain: Figures[]; gateway: Figures[]; tmpfs: Figures[] } = { plain: [], gateway: [], tmpfs: [] };
    const paced: { plain: Figures[]; gateway: Figures[]; tmpfs: Figures[] } = { plain: [], gateway: [], tmpfs: [] };
    for (let r = 0; r < rounds; r++) {
      ctx.log(`  gateway round ${r + 1}/${rounds}`);
      const order = r % 2 === 0 ? (['plain', 'gateway'] as const) : (['gateway', 'plain'] as const);
      for (const side of order) many[side].push(await load(sides[side], perSession));
      // The tmpfs gateway only where a call's own cost shows: alone, and paced; which side goes first rotates.
      const three = (['plain', 'gateway', 'tmpfs'] as const).map((_, i, all) => all[(i + r) % 3] as 'plain' | 'gateway' | 'tmpfs');
      const withRam = ram === undefined ? order : three;
      for (const side of withRam) one[side].push(await load(sides[side].slice(0, 1), perSession * 8));
      for (const side of withRam) paced[side].push(await pacedLoad(sides[side], ctx.quick ? 3 : pacedCallsPerSession, pacedIntervalMs));
    }
    const ratios = many.gateway.map((g, i) => g.opsPerSec / (many.plain[i] as Figures).opsPerSec);
    const ratio = round(medianOf(ratios), 3);
    const median = (list: Figures[]): number => medianOf(list.map((f) => f.medianUs));
    const added64Ms = round((median(many.gateway) - median(many.plain)) / 1_000, 3);
    const added1Ms = round((median(one.gateway) - median(one.plain)) / 1_000, 3);
    const addedPacedMs = round((median(paced.gateway) - median(paced.plain)) / 1_000, 3);
    const tmpfsAdded = ram === undefined ? undefined : { paced: round((median(paced.tmpfs) - median(paced.plain)) / 1_000, 3), one: round((median(one.tmpfs) - median(one.plain)) / 1_000, 3) };
    const pacedRate = Math.round((sessionsCount * 1_000) / pacedIntervalMs);
    const best = (list: Figures[]): Figures => [...list].sort((a, b) => b.opsPerSec - a.opsPerSec)[0] as Figures;
    const idleGateway = await idleSessionKiB(gw.url, gw.child.pid, token);
    const idlePlain = await idleSessionKiB(plain.url, plain.child.pid);
    const loadAtEnd = os.loadavg().map((l) => round(l, 2));
    return {
      id: '15',
      title: 'Gateway: atc gateway (SQLite) over a plain pass-through on the same SDK, 64 Streamable HTTP sessions',
      figures: {
        'plain pass-through, 64 sessions (per call)': best(many.plain),
        'atc gateway, 64 sessions (per call)': best(many.gateway),
        'plain pass-through, 1 session (per call)': best(one.plain),
        'atc gateway, 1 session (per call)': best(one.gateway),
        [`plain pass-through, 64 sessions paced at ${pacedRate} calls/s (per call)`]: best(paced.plain),
        [`atc gateway, 64 sessions paced at ${pacedRate} calls/s (per call)`]: best(paced.gateway),
        ...(ram === undefined ? {} : { [`atc gateway, ledger on tmpfs, 64 sessions paced at ${pacedRate} calls/s (per call)`]: best(paced.tmpfs), 'atc gateway, ledger on tmpfs, 1 session (per call)': best(one.tmpfs) }),
      },
      derived: {
        throughputRatio64: ratio,
        throughputRatiosPerRound: ratios.map((r) => round(r, 3)).join(' '),
        addedMedianMs64: added64Ms,
        addedMedianMs1: added1Ms,
        addedMedianMs64Paced: addedPacedMs,
        addedMedianTargetMs: 1,
        addedMedianPass: addedPacedMs <= 1,
        ...(tmpfsAdded === undefined ? {} : { addedMedianMs64PacedTmpfs: tmpfsAdded.paced, addedMedianMs1Tmpfs: tmpfsAdded.one }),
        idleSessionKiBGateway: idleGateway.kib,
        idleSessionKiBGatewayStdErr: idleGateway.stdErr,
        idleSessionKiBPlain: idlePlain.kib,
        idleSessionKiBPlainStdErr: idlePlain.stdErr,
        loadAverageAtStart: loadAtStart.join(' '),
        loadAverageAtEnd: loadAtEnd.join(' '),
      },
      target: { description: 'throughput at 64 sessions, atc gateway ÷ plain pass-through (median of round pairs; higher is better, at least the limit)', value: ratio, limit: 0.7, pass: ratio >= 0.7 },
      notes: [
        `median added per call at 64 sessions paced at ${pacedRate} calls/s (below both sides' capacity, so a call's own cost): ${addedPacedMs} ms (target ≤ 1 ms: ${addedPacedMs <= 1 ? 'met' : 'not met'}); one session alone: ${added1Ms} ms; 64 sessions calling back to back: ${added64Ms} ms, which is time queued behind the other sessions' calls (64 ÷ throughput), the throughput ratio restated`,
        ...(tmpfsAdded === undefined
          ? []
          : [`the same gateway with its ledger on tmpfs (${tmpfs}: fsync returns at once, so not durable across a power loss; a measurement of the disk's flush, not a way to run): added ${tmpfsAdded.paced} ms paced, ${tmpfsAdded.one} ms alone`]),
        `resident memory per idle session (initialize only; the least-squares slope over five readings from ${idleSessions} to ${4 * idleSessions} open sessions, ± its standard error): gateway ${idleGateway.kib} ± ${idleGateway.stdErr} KiB, plain ${idlePlain.kib} ± ${idlePlain.stdErr} KiB; a figure within its error of 0 is below what resident memory can show`,
        `${ram === undefined ? 'four' : 'five'} processes: the bench (all 64 clients), the gateway${ram === undefined ? '' : ', the tmpfs gateway'} and the pass-through, and the one no-op upstream (a session per agent session on every side); rounds alternate which side goes first`,
        `load average at start ${loadAtStart.join(' ')}, at end ${loadAtEnd.join(' ')} on ${os.cpus().length} CPUs shared with other work: absolute figures are contended; the ratio is taken within the same run`,
      ],
    };
  } finally {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    gw.stop();
    ram?.gw.stop();
    ramScratch?.cleanup();
    plain.stop();
    echo.stop();
    scratch.cleanup();
  }
}

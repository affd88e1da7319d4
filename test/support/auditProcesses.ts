import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';

const root = path.resolve(__dirname, '../..');

/** The log writer in its own process (test/support/auditLogWriter.js): one request, one reply. */
export function startLogWriter(file: string): { send: (request: Record<string, unknown>) => Promise<Record<string, unknown>>; stop: () => Promise<void> } {
  const child = spawn(process.execPath, [path.join(__dirname, 'auditLogWriter.js'), file], { stdio: ['pipe', 'pipe', 'inherit'] });
  const waiting: ((reply: Record<string, unknown>) => void)[] = [];
  readline.createInterface({ input: child.stdout as NonNullable<ChildProcess['stdout']> }).on('line', (line) => waiting.shift()?.(JSON.parse(line) as Record<string, unknown>));
  const send = (request: Record<string, unknown>): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      waiting.push((reply) => (typeof reply.error === 'string' ? reject(new Error(reply.error)) : resolve(reply)));
      child.stdin?.write(`${JSON.stringify(request)}\n`);
    });
  return {
    send,
    stop: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.stdin?.end();
      await exited;
    },
  };
}

/** `atc serve <log>` as a user runs it (the built CLI); resolves with the URL it prints. */
export async function startServeProcess(file: string, extra: readonly string[] = []): Promise<{ url: string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [path.join(root, 'dist/src/cli/main.js'), 'serve', file, '--port', '0', ...extra], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    readline.createInterface({ input: child.stdout as NonNullable<ChildProcess['stdout']> }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`atc serve exited with ${code}`)));
  });
  const match = /^listening on (http:\/\/\S+)$/.exec(line);
  if (match === null) throw new Error(`atc serve printed ${line}`);
  return {
    url: match[1] as string,
    stop: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

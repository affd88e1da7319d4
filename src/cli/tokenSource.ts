import fs from 'node:fs';
import net from 'node:net';

/** More than any token (issued ones have 47 characters; the ledger reads at most 128). */
export const tokenBytesMax = 1_024;
/** How long `--token-fd` waits for its writer to send the token and close. */
export const tokenFdWaitMs = 10_000;

export class TokenSourceError extends Error {
  override readonly name = 'TokenSourceError';
}

/** The token text: surrounding whitespace (a trailing newline) removed; empty is refused. */
function tokenOf(bytes: Buffer, source: string): string {
  const token = bytes.toString('utf8').trim();
  if (token === '') throw new TokenSourceError(`${source} holds no token`);
  return token;
}

/**
 * Reads the token from a file only its owner can read, so the token never has to be in the proxy's
 * environment (where `/proc/<pid>/environ` shows it to every process of the same user, the
 * upstream included). Refused: a symlink (`O_NOFOLLOW`), anything but a regular file (opened
 * non-blocking, so a FIFO cannot hold the start), a mode giving group or others any access, a file
 * owned by another user, more than `tokenBytesMax` bytes. Errors name the path, never the content.
 */
export function readTokenFile(file: string): string {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    throw new TokenSourceError(code === 'ELOOP' ? `--token-file ${file} is a symlink: name the file itself` : `cannot open --token-file ${file}: ${code}`);
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) throw new TokenSourceError(`--token-file ${file} is not a regular file`);
    if ((stat.mode & 0o077) !== 0) throw new TokenSourceError(`--token-file ${file} is open to group or others (mode ${(stat.mode & 0o777).toString(8)}): chmod 600 it`);
    if (typeof process.getuid === 'function' && stat.uid !== process.getuid()) throw new TokenSourceError(`--token-file ${file} belongs to another user`);
    const buffer = Buffer.alloc(tokenBytesMax + 1);
    let length = 0;
    for (let read = -1; read !== 0 && length <= tokenBytesMax; length += read) read = fs.readSync(fd, buffer, length, buffer.length - length, null);
    if (length > tokenBytesMax) throw new TokenSourceError(`--token-file ${file} is larger than ${tokenBytesMax} bytes`);
    return tokenOf(buffer.subarray(0, length), `--token-file ${file}`);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Reads the token from an inherited file descriptor (`3<token.txt`, or a pipe a launcher writes
 * and closes) until end of file, then closes it: the upstream started afterwards cannot inherit it.
 * Descriptors 0–2 are MCP's stdin/stdout and stderr, so they are refused; so is anything but a
 * file or a pipe, more than `tokenBytesMax` bytes, and a pipe whose writer does not close within
 * `tokenFdWaitMs`. A pipe is read through the event loop (not a blocking read in the thread pool),
 * so giving up on a silent writer closes it and lets the process exit at once.
 */
export async function readTokenFd(text: string): Promise<string> {
  const fd = /^[0-9]{1,4}$/.test(text) ? Number(text) : Number.NaN;
  if (!(fd >= 3)) throw new TokenSourceError('--token-fd needs a descriptor number of 3 or more (0-2 are the MCP stdio and stderr)');
  const source = `--token-fd ${fd}`;
  let stat: fs.Stats;
  try {
    stat = fs.fstatSync(fd);
  } catch {
    throw new TokenSourceError(`${source} is not an open descriptor`);
  }
  if (stat.isFile()) return readFileFd(fd, source);
  if (!stat.isFIFO() && !stat.isSocket()) {
    fs.closeSync(fd);
    throw new TokenSourceError(`${source} is neither a file nor a pipe`);
  }
  return tokenOf(await readPipe(fd, source), source);
}

function readFileFd(fd: number, source: string): string {
  try {
    const buffer = Buffer.alloc(tokenBytesMax + 1);
    let length = 0;
    for (let read = -1; read !== 0 && length <= tokenBytesMax; length += read) read = fs.readSync(fd, buffer, length, buffer.length - length, null);
    if (length > tokenBytesMax) throw new TokenSourceError(`${source} is larger than ${tokenBytesMax} bytes`);
    return tokenOf(buffer.subarray(0, length), source);
  } finally {
    fs.closeSync(fd);
  }
}

function readPipe(fd: number, source: string): Promise<Buffer> {
  const pipe = new net.Socket({ fd, readable: true, writable: false });
  const chunks: Buffer[] = [];
  let length = 0;
  return new Promise<Buffer>((resolve, reject) => {
    const fail = (message: string): void => {
      pipe.destroy();
      reject(new TokenSourceError(message));
    };
    const timer = setTimeout(() => fail(`${source} was not closed by its writer within ${tokenFdWaitMs} ms`), tokenFdWaitMs);
    pipe.on('data', (chunk: Buffer) => {
      length += chunk.length;
      if (length > tokenBytesMax) fail(`${source} sent more than ${tokenBytesMax} bytes`);
      else chunks.push(chunk);
    });
    pipe.once('error', (error: NodeJS.ErrnoException) => fail(`cannot read ${source}: ${error.code ?? 'error'}`));
    pipe.once('end', () => {
      clearTimeout(timer);
      // Resolved once the descriptor is closed: the upstream is started only after that.
      pipe.once('close', () => resolve(Buffer.concat(chunks))).destroy();
    });
    pipe.once('close', () => clearTimeout(timer));
  });
}

import fs from 'node:fs';
import { configBytesMax, GatewayConfigError, parseGatewayConfig, type GatewayConfig } from './config';

/** Reads and parses a config file, refusing one larger than `configBytesMax` before reading it. */
export function readGatewayConfigFile(file: string): GatewayConfig {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (error) {
    throw new GatewayConfigError('(file)', `cannot open ${file}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  try {
    const size = fs.fstatSync(fd).size;
    if (size > configBytesMax) throw new GatewayConfigError('(config)', `is larger than ${configBytesMax} bytes`);
    const buffer = Buffer.alloc(size);
    const read = fs.readSync(fd, buffer, 0, size, 0);
    return parseGatewayConfig(buffer.subarray(0, read).toString('utf8'), file);
  } finally {
    fs.closeSync(fd);
  }
}

import { lookup } from 'node:dns/promises';
import type { ResolveHost } from '../../stream/ports/toolResources';

/** The system resolver (getaddrinfo), in its order; `ctx.fetch` checks and connects to the first address. */
export const systemResolveHost: ResolveHost = async (hostname) => (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

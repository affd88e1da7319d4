/** The two budgets for peers that have none of their own (casbin, Cedar): two counters per agent. */
export function counters(callsLimit: number, bytesLimit: number): { take(agent: string, bytes: number): boolean } {
  const used = new Map<string, { calls: number; bytes: number }>();
  return {
    take(agent, bytes) {
      let u = used.get(agent);
      if (u === undefined) used.set(agent, (u = { calls: 0, bytes: 0 }));
      if (u.calls + 1 > callsLimit || u.bytes + bytes > bytesLimit) return false;
      u.calls += 1;
      u.bytes += bytes;
      return true;
    },
  };
}

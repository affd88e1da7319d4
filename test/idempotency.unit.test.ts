import type { EventOf } from '../src/domain/events';
import { bindingKey, canBindKey, keyBinding, liveBinding, orderKey, settledStatus, type KeyBinding, type KeyOrderEntry, type KeyQueue } from '../src/domain/idempotency';
import { bindKey, settleKey, type KeyMaps, type MapWrites } from '../src/domain/idempotencyFold';
import { emptyShardedMap, shardGet, shardWith, shardWithout, type ShardedMap } from '../src/domain/shardedMap';
import { initialState } from '../src/domain/state';

// Idempotency bindings: lookups (idempotency.ts) and the fold step (idempotencyFold.ts), on maps built here.
const writes: MapWrites = { put: (map, key, value) => shardWith(map, key, value), remove: (map, key) => shardWithout(map, key) };
const digest = (c: string): string => c.repeat(64);

function emptyMaps(): KeyMaps {
  return { keys: emptyShardedMap<KeyBinding>(), keyQueues: emptyShardedMap<KeyQueue>(), keyOrder: emptyShardedMap<KeyOrderEntry>() };
}

function admitted(callId: string, at: number, expiresAt: number, extra: { grantId?: string; ancestors?: readonly string[]; keyDigest?: string } = {}): EventOf<'call.admitted'> {
  return {
    type: 'call.admitted',
    callId,
    grantId: extra.grantId ?? 'g',
    tool: 'notes',
    reserved: { calls: 1, inputBytes: 2 },
    ...(extra.ancestors === undefined ? {} : { ancestors: extra.ancestors }),
    idempotency: { keyDigest: extra.keyDigest ?? digest('a'), argsDigest: digest('b'), expiresAt },
    seq: 1,
    at,
    prevHash: digest('0'),
    hash: digest('1'),
  } as unknown as EventOf<'call.admitted'>;
}

function bind(maps: KeyMaps, event: EventOf<'call.admitted'>): void {
  bindKey(maps, writes, event, bindingKey(event.grantId, event.idempotency?.keyDigest ?? ''));
}

describe('bindingKey and orderKey', () => {
  it('joins grant and key digest with a space, root and position with #', () => {
    expect(bindingKey('g1', 'abc')).toBe('g1 abc');
    expect(orderKey('r', 7)).toBe('r#7');
  });
});

describe('liveBinding', () => {
  function stateWith(expiresAt: number) {
    return { ...initialState, keys: shardWith(emptyShardedMap<KeyBinding>(), bindingKey('g', digest('a')), keyBinding('c1', 'notes', digest('b'), expiresAt, 'in_flight')) };
  }

  it('finds a binding before it expires', () => {
    expect(liveBinding(stateWith(100), 'g', digest('a'), 99)?.callId).toBe('c1');
  });

  it('treats a binding as gone from its expiry on (exclusive)', () => {
    expect(liveBinding(stateWith(100), 'g', digest('a'), 100)).toBeUndefined();
  });

  it('finds nothing for another grant or key', () => {
    expect(liveBinding(stateWith(100), 'h', digest('a'), 0)).toBeUndefined();
    expect(liveBinding(stateWith(100), 'g', digest('c'), 0)).toBeUndefined();
  });
});

describe('canBindKey', () => {
  function queueOf(count: number, oldestExpiresAt: number) {
    const maps = emptyMaps();
    for (let i = 0; i < count; i++) bind(maps, admitted(`c${i}`, 0, i === 0 ? oldestExpiresAt : 1_000, { keyDigest: digest(String(i)) }));
    return maps;
  }

  it('allows a tree with no queue yet', () => {
    const maps = emptyMaps();
    expect(canBindKey(maps.keyQueues, maps.keyOrder, 'g', 0, 1)).toBe(true);
  });

  it('allows a tree below keysMax and refuses one at keysMax whose oldest binding is live', () => {
    const maps = queueOf(2, 500);
    expect(canBindKey(maps.keyQueues, maps.keyOrder, 'g', 10, 3)).toBe(true);
    expect(canBindKey(maps.keyQueues, maps.keyOrder, 'g', 10, 2)).toBe(false);
  });

  it('allows a full tree once its oldest binding has expired (at its expiry, inclusive)', () => {
    const maps = queueOf(2, 500);
    expect(canBindKey(maps.keyQueues, maps.keyOrder, 'g', 499, 2)).toBe(false);
    expect(canBindKey(maps.keyQueues, maps.keyOrder, 'g', 500, 2)).toBe(true);
  });

  it('counts the live positions of a queue whose front has been evicted (next − first)', () => {
    const maps = emptyMaps();
    bind(maps, admitted('c1', 0, 50, { keyDigest: digest('1') }));
    bind(maps, admitted('c2', 0, 60, { keyDigest: digest('2') }));
    bind(maps, admitted('c3', 0, 500, { keyDigest: digest('3') }));
    bind(maps, admitted('c4', 100, 600, { keyDigest: digest('4') }));
    expect(shardGet(maps.keyQueues, 'g')).toEqual({ first: 2, next: 4 });
    expect(canBindKey(maps.keyQueues, maps.keyOrder, 'g', 100, 3)).toBe(true);
    expect(canBindKey(maps.keyQueues, maps.keyOrder, 'g', 100, 2)).toBe(false);
  });

  it('refuses a full tree whose oldest position has no entry', () => {
    const maps = queueOf(1, 500);
    const order = shardWithout(maps.keyOrder, orderKey('g', 0));
    expect(canBindKey(maps.keyQueues, order, 'g', 1_000, 1)).toBe(false);
  });
});

describe('settledStatus and keyBinding', () => {
  it('maps a settlement to completed, failed or timed_out', () => {
    expect(settledStatus({ type: 'call.completed' })).toBe('completed');
    expect(settledStatus({ type: 'call.failed' })).toBe('failed');
    expect(settledStatus({ type: 'call.failed', timedOut: true })).toBe('timed_out');
  });

  it('builds a frozen binding', () => {
    const binding = keyBinding('c', 't', 'd', 5, 'failed');
    expect(binding).toEqual({ callId: 'c', tool: 't', argsDigest: 'd', expiresAt: 5, status: 'failed' });
    expect(Object.isFrozen(binding)).toBe(true);
  });
});

describe('bindKey', () => {
  it('does nothing for an admission without a key', () => {
    const maps = emptyMaps();
    const before = { ...maps };
    const { idempotency: _none, ...unkeyed } = admitted('c', 0, 100);
    bindKey(maps, writes, unkeyed as EventOf<'call.admitted'>, 'g x');
    expect(maps).toEqual(before);
  });

  it('binds the key in flight and appends its position to the grant’s queue', () => {
    const maps = emptyMaps();
    bind(maps, admitted('c1', 0, 100));
    expect(shardGet(maps.keys, bindingKey('g', digest('a')))).toEqual({ callId: 'c1', tool: 'notes', argsDigest: digest('b'), expiresAt: 100, status: 'in_flight' });
    expect(shardGet(maps.keyQueues, 'g')).toEqual({ first: 0, next: 1 });
    expect(shardGet(maps.keyOrder, 'g#0')).toEqual({ binding: bindingKey('g', digest('a')), callId: 'c1', expiresAt: 100 });
  });

  it('queues a child grant’s keys under its root', () => {
    const maps = emptyMaps();
    bind(maps, admitted('c1', 0, 100, { grantId: 'child', ancestors: ['root', 'mid'] }));
    expect(shardGet(maps.keyQueues, 'root')).toEqual({ first: 0, next: 1 });
    expect(shardGet(maps.keyQueues, 'child')).toBeUndefined();
    expect(shardGet(maps.keyQueues, 'mid')).toBeUndefined();
  });

  it('queues under the grant itself when its ancestor list is empty', () => {
    const maps = emptyMaps();
    bind(maps, admitted('c1', 0, 100, { grantId: 'g', ancestors: [] }));
    expect(shardGet(maps.keyQueues, 'g')).toEqual({ first: 0, next: 1 });
  });

  it('evicts expired bindings from the front (at their expiry, inclusive) and stops at the first live one', () => {
    const maps = emptyMaps();
    bind(maps, admitted('c1', 0, 50, { keyDigest: digest('1') }));
    bind(maps, admitted('c2', 0, 60, { keyDigest: digest('2') }));
    bind(maps, admitted('c3', 0, 500, { keyDigest: digest('3') }));
    bind(maps, admitted('c4', 0, 55, { keyDigest: digest('4') }));
    bind(maps, admitted('c5', 60, 900, { keyDigest: digest('5') }));
    expect(shardGet(maps.keys, bindingKey('g', digest('1')))).toBeUndefined();
    expect(shardGet(maps.keys, bindingKey('g', digest('2')))).toBeUndefined();
    expect(shardGet(maps.keys, bindingKey('g', digest('3')))?.callId).toBe('c3');
    // c4 expired too, but sits behind the live c3: eviction goes front to back only.
    expect(shardGet(maps.keys, bindingKey('g', digest('4')))?.callId).toBe('c4');
    expect(shardGet(maps.keyOrder, 'g#0')).toBeUndefined();
    expect(shardGet(maps.keyOrder, 'g#1')).toBeUndefined();
    expect(shardGet(maps.keyOrder, 'g#2')?.callId).toBe('c3');
    expect(shardGet(maps.keyQueues, 'g')).toEqual({ first: 2, next: 5 });
  });

  it('keeps a binding re-made after expiry when the old position is evicted', () => {
    const maps = emptyMaps();
    bind(maps, admitted('c0', 0, 1_000, { keyDigest: digest('0') }));
    bind(maps, admitted('c1', 0, 50));
    bind(maps, admitted('c2', 60, 5_000));
    bind(maps, admitted('c3', 1_000, 6_000, { keyDigest: digest('3') }));
    expect(shardGet(maps.keys, bindingKey('g', digest('a')))?.callId).toBe('c2');
    expect(shardGet(maps.keys, bindingKey('g', digest('0')))).toBeUndefined();
    expect(shardGet(maps.keyQueues, 'g')).toEqual({ first: 2, next: 4 });
  });

  it('skips a queue position that has no entry', () => {
    const maps = emptyMaps();
    bind(maps, admitted('c1', 0, 500, { keyDigest: digest('1') }));
    maps.keyOrder = shardWithout(maps.keyOrder, 'g#0');
    bind(maps, admitted('c2', 10, 600, { keyDigest: digest('2') }));
    expect(shardGet(maps.keyQueues, 'g')).toEqual({ first: 1, next: 2 });
    expect(shardGet(maps.keys, bindingKey('g', digest('1')))?.callId).toBe('c1');
  });
});

describe('settleKey', () => {
  it('records how the binding’s own call ended', () => {
    const maps = emptyMaps();
    bind(maps, admitted('c1', 0, 100));
    settleKey(maps, writes, bindingKey('g', digest('a')), 'c1', 'completed');
    expect(shardGet(maps.keys, bindingKey('g', digest('a')))).toEqual({ callId: 'c1', tool: 'notes', argsDigest: digest('b'), expiresAt: 100, status: 'completed' });
  });

  it('leaves a binding another call made, and a missing binding, alone', () => {
    const maps = emptyMaps();
    bind(maps, admitted('c1', 0, 100));
    const keys = maps.keys;
    settleKey(maps, writes, bindingKey('g', digest('a')), 'other', 'failed');
    settleKey(maps, writes, bindingKey('g', digest('z')), 'c1', 'failed');
    expect(maps.keys).toBe(keys);
  });
});

import { initialState, type LedgerState } from '../../src/domain/state';
import { TransientState } from '../../src/domain/transientState';

// TransientState changes in place only what it built itself, and tells its own nodes by "not
// frozen": a state that is not frozen all through would be changed in place, so it is refused.

describe('TransientState', () => {
  it('starts from a frozen state', () => {
    expect(new TransientState(initialState).view).toBe(initialState);
  });
  it.each(['grants', 'tokens', 'inFlight', 'idempotencyBindings'] as const)('refuses a state whose %s map is not frozen', (field) => {
    const thawed = Object.freeze({ ...initialState, [field]: { ...(initialState[field] as object) } }) as LedgerState;
    expect(() => new TransientState(thawed)).toThrow(new TypeError('a transient fold needs a frozen state (evolve and snapshots produce one)'));
  });
  it('refuses a state whose root is not frozen', () => {
    expect(() => new TransientState({ ...initialState })).toThrow(TypeError);
  });
});

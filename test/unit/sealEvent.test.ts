import { eventHash, sealEvent } from '../../src/domain/chain';
import { admit, given, issueCommand, payloads, registerNotes, T0 } from '../support/given';

// Fixtures are built inside each test, so that per-test coverage can tell the tests apart.
function admittedPayload() {
  const { state, when } = given(registerNotes, issueCommand());
  const [payload] = payloads(when(admit()));
  return { state, payload: payload as NonNullable<typeof payload> };
}

describe('sealEvent', () => {
  it('chains the payload on the head: next seq, the head hash as prevHash, its own hash', () => {
    const { state, payload } = admittedPayload();
    const event = sealEvent(payload, T0 + 1, state.head);
    expect(event).toMatchObject({ seq: state.head.seq + 1, at: T0 + 1, prevHash: state.head.hash });
    expect(event.hash).toBe(eventHash(event));
  });

  it('returns an event frozen at every depth, so no subscriber can change what was logged', () => {
    const { state, payload } = admittedPayload();
    const event = sealEvent(payload, T0 + 1, state.head);
    expect(Object.isFrozen(event)).toBe(true);
    expect(event.type === 'call.admitted' && Object.isFrozen(event.reserved)).toBe(true);
  });
});

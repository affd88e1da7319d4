import { eventHash, sealEvent } from '../src/domain/chain';
import { admit, given, issueCommand, payloads, registerNotes, T0 } from './support/given';

describe('sealEvent', () => {
  const { state, when } = given(registerNotes, issueCommand());
  const [payload] = payloads(when(admit()));

  it('chains the payload on the head: next seq, the head hash as prevHash, its own hash', () => {
    const event = sealEvent(payload as NonNullable<typeof payload>, T0 + 1, state.head);
    expect(event).toMatchObject({ seq: state.head.seq + 1, at: T0 + 1, prevHash: state.head.hash });
    expect(event.hash).toBe(eventHash(event));
  });

  it('returns an event frozen at every depth, so no subscriber can change what was logged', () => {
    const event = sealEvent(payload as NonNullable<typeof payload>, T0 + 1, state.head);
    expect(Object.isFrozen(event)).toBe(true);
    expect(event.type === 'call.admitted' && Object.isFrozen(event.reserved)).toBe(true);
  });
});

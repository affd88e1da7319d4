import { eventShapeProblem, isHex64 } from '../../src/verification/eventShape';
import { given, issueCommand, registerNotes } from '../support/given';

// The shape check's edges: what a hash must look like, and what it says about things that are not
// events at all (it must answer, never throw).

describe('isHex64', () => {
  it('accepts 64 lower-case hex digits and nothing longer or shorter', () => {
    expect(isHex64('0123456789abcdef'.repeat(4))).toBe(true);
    expect(isHex64(`${'a'.repeat(64)}b`)).toBe(false);
    expect(isHex64('a'.repeat(63))).toBe(false);
  });
  it('refuses upper-case, non-hex and non-ASCII characters', () => {
    expect(isHex64(`A${'a'.repeat(63)}`)).toBe(false);
    expect(isHex64(`g${'a'.repeat(63)}`)).toBe(false);
    expect(isHex64(`\u00e0${'a'.repeat(63)}`)).toBe(false);
  });
});

describe('eventShapeProblem', () => {
  it('answers for values that are not objects instead of throwing', () => {
    expect(eventShapeProblem(undefined)).toBe('(event) must be object');
    expect(eventShapeProblem(null)).toBe('(event) must be object');
    expect(eventShapeProblem([])).toBe('(event) must be object');
  });
  it('names the missing field, and the path of a wrong one', () => {
    const [event] = given(registerNotes, issueCommand()).events;
    const { at: _at, ...noAt } = event as unknown as Record<string, unknown>;
    expect(eventShapeProblem(noAt)).toBe("(event) must have required property 'at'");
    expect(eventShapeProblem({ ...(event as object), seq: 'one' })).toBe('/seq must be integer');
    expect(eventShapeProblem(event)).toBeUndefined();
  });
});

describe('eventShapeProblem: arrays', () => {
  it('refuses an array even when it carries a known event type', () => {
    expect(eventShapeProblem(Object.assign([], { type: 'tool.registered' }))).toBe('(event) must be object');
  });
});

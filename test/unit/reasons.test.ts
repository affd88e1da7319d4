import { isRejectReason } from '../../src/domain/reasons';

describe('isRejectReason', () => {
  it('knows the documented reasons and nothing else', () => {
    expect(isRejectReason('tool_not_granted')).toBe(true);
    expect(isRejectReason('not_a_reason')).toBe(false);
    expect(isRejectReason(5)).toBe(false);
  });
});

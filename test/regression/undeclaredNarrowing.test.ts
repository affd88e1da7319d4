import { createLedger, type Ledger } from '../../src';
import { policyIssueOptions } from '../../src/integrations/mcp/policy';
import { undeclaredNarrowedProperty } from '../../src/tools/declaredProperties';
import { notesLedger } from '../support/fixtures';

// Regression (issue 32, item 10): a narrowing on a property the tool does not declare (a typo such
// as `pth` for `path`) constrained nothing, silently letting every value through. `issue` now fails
// naming the tool and the property; `attenuate` is `attenuation_invalid`; a policy goes through issue.

const T0 = 1_700_000_000_000;
const grant = { expiresAt: T0 + 60_000, budget: { calls: 10, inputBytes: 10_000 } };

describe('regression: a narrowing on an undeclared property', () => {
  it('fails issue, naming the tool and the property, and appends nothing', async () => {
    const { ledger } = await notesLedger({ clock: () => T0 });
    const before = ledger.events().length;
    await expect(ledger.issue({ tools: ['notes.write'], args: { 'notes.write': { properties: { pth: { pattern: '^drafts/' } } } }, ...grant })).rejects.toThrow(
      'args["notes.write"] narrows property "pth", which the inputSchema of tool "notes.write" does not declare',
    );
    await expect(ledger.issue({ tools: ['notes.write'], args: { 'notes.write': { required: ['title'] } }, ...grant })).rejects.toThrow(/narrows property "title"/);
    expect(ledger.events()).toHaveLength(before);
    await ledger.close();
  });

  it('refuses attenuate as attenuation_invalid, saying which property', async () => {
    const { ledger } = await notesLedger({ clock: () => T0 });
    const { token } = await ledger.issue({ tools: ['notes.write'], resources: ['notes:/drafts/'], ...grant });
    const outcome = await ledger.attenuate(token, { args: { 'notes.write': { properties: { txt: { maxLength: 3 } } } } });
    expect(outcome).toMatchObject({ status: 'rejected', reason: 'attenuation_invalid', message: expect.stringContaining('narrows property "txt"') });
    expect(await ledger.attenuate(token, { args: { 'notes.write': { properties: { text: { maxLength: 3 } } } } })).toMatchObject({ status: 'issued' });
    await ledger.close();
  });

  it('refuses a policy whose narrowing names an undeclared property (policies are issued through issue)', async () => {
    const { ledger } = await notesLedger({ clock: () => T0 });
    const options = policyIssueOptions({ tools: ['notes.read'], args: { 'notes.read': { properties: { file: { maxLength: 9 } } } }, scopes: ['notes:/drafts/'], expiresIn: '1m', budget: { calls: 1, inputBytes: 100 } } as never, T0);
    await expect(ledger.issue(options)).rejects.toThrow(/narrows property "file", which the inputSchema of tool "notes.read"/);
    await ledger.close();
  });

  it('follows nested properties, $ref and combinators of the tool schema', () => {
    const tool = {
      type: 'object',
      $defs: { opts: { type: 'object', properties: { depth: { type: 'integer' } } } },
      properties: { opts: { $ref: '#/$defs/opts' }, meta: { type: 'object' } },
      allOf: [{ properties: { extra: { type: 'string' } } }],
      additionalProperties: false,
    };
    expect(undeclaredNarrowedProperty(tool, { properties: { opts: { properties: { depth: { maximum: 3 } } } } })).toBeUndefined();
    expect(undeclaredNarrowedProperty(tool, { properties: { opts: { properties: { dpth: { maximum: 3 } } } } })).toBe('opts/dpth');
    expect(undeclaredNarrowedProperty(tool, { properties: { extra: { maxLength: 3 } } })).toBeUndefined();
    // `meta` is an open object: any name below it is declared.
    expect(undeclaredNarrowedProperty(tool, { properties: { meta: { properties: { anything: { type: 'string' } } } } })).toBeUndefined();
    expect(undeclaredNarrowedProperty(tool, { anyOf: [{ required: ['opts'] }, { required: ['optz'] }] })).toBe('optz');
  });

  it('counts names matched by patternProperties as declared, and a tool schema with no properties as open', () => {
    expect(undeclaredNarrowedProperty({ type: 'object', patternProperties: { '^x-': { type: 'string' } }, additionalProperties: false }, { properties: { 'x-trace': { maxLength: 9 }, y: {} } })).toBe('y');
    expect(undeclaredNarrowedProperty({ type: 'object' }, { properties: { anything: { maxLength: 9 } } })).toBeUndefined();
    expect(undeclaredNarrowedProperty({ type: 'object', properties: { a: {} }, additionalProperties: { type: 'string' } }, { properties: { b: { maxLength: 9 } } })).toBeUndefined();
  });

  it('still issues narrowings on declared properties (the common case is unchanged)', async () => {
    const ledger: Ledger = createLedger({ clock: () => T0 });
    await ledger.registerTool({ name: 't', inputSchema: { type: 'object', properties: { path: { type: 'string' } } }, run: () => 1 });
    await expect(ledger.issue({ tools: ['t'], args: { t: { properties: { path: { pattern: '^drafts/' } }, required: ['path'] } }, ...grant })).resolves.toMatchObject({ grantId: expect.any(String) });
    await ledger.close();
  });
});

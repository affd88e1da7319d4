import type { JsonObject } from '../../src';
import { admitCommand } from '../../src/stream/admitCommand';
import { ToolRegistry } from '../../src/stream/toolRegistry';
import { snapshotArguments } from '../../src/tools/arguments';
import { given, issueCommand, registerNotes, T0 } from '../support/given';

// The shell's half of admission: host checks run only when the log-only checks let the call through.
function setup() {
  const named: JsonObject[] = [];
  const registry = new ToolRegistry();
  const schema = registerNotes.type === 'registerTool' ? registerNotes.inputSchema : {};
  registry.attach(
    {
      name: 'notes.write',
      inputSchema: schema,
      resources: (args) => {
        named.push(args);
        return [`notes:/${String(args.path)}`];
      },
      run: () => undefined,
    },
    registry.compiler.compileToolSchema(schema),
  );
  const { state } = given(registerNotes, issueCommand());
  const issue = issueCommand();
  const digest = issue.type === 'issue' ? issue.tokenDigest : undefined;
  return { named, registry, state, digest };
}

describe('admitCommand', () => {
  it('asks the tool for its resources and passes the outcome to the decider when the grant covers the call', () => {
    const { named, registry, state, digest } = setup();
    const command = admitCommand(registry, state, { callId: 'c1', tokenDigest: digest, tool: 'notes.write', args: snapshotArguments({ path: 'drafts/a', text: 'x' }) }, T0 + 1);
    expect(command).toMatchObject({ type: 'admit', grantId: 'g1', argumentCheck: 'ok', resourceCheck: 'ok' });
    expect(named).toHaveLength(1);
  });

  it('runs no host check (schema, resources) for an unknown token', () => {
    const { named, registry, state } = setup();
    const command = admitCommand(registry, state, { callId: 'c1', tokenDigest: 'f'.repeat(64), tool: 'notes.write', args: snapshotArguments({ path: '../x', text: 1 }) }, T0 + 1);
    expect(command).toMatchObject({ grantId: undefined, argumentCheck: 'ok', resourceCheck: 'ok' });
    expect(named).toHaveLength(0);
  });

  it('does not call resources() for arguments the tool schema refuses', () => {
    const { named, registry, state, digest } = setup();
    const command = admitCommand(registry, state, { callId: 'c1', tokenDigest: digest, tool: 'notes.write', args: snapshotArguments({ path: 'drafts/a', text: 1 }) }, T0 + 1);
    expect(command).toMatchObject({ argumentCheck: 'invalid_arguments', resourceCheck: 'ok' });
    expect(named).toHaveLength(0);
  });

  it('fails closed as invalid_resource when resources() throws', () => {
    const { registry, state, digest } = setup();
    const attached = registry.get('notes.write');
    registry.attach({ ...(attached?.definition as NonNullable<typeof attached>['definition']), resources: () => { throw new Error('boom'); } }, attached?.validate as NonNullable<typeof attached>['validate']);
    const command = admitCommand(registry, state, { callId: 'c1', tokenDigest: digest, tool: 'notes.write', args: snapshotArguments({ path: 'drafts/a', text: 'x' }) }, T0 + 1);
    expect(command).toMatchObject({ resourceCheck: 'invalid_resource' });
  });
});

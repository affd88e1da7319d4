import { isCanonicalResource, isCanonicalScope } from '../../src';
import { argumentsOf, loadDataset, type Dataset } from '../../experiments/agentdojo/data';
import { factScopes, grantFor, policyNames } from '../../experiments/agentdojo/policies';
import { addressResource, named, segment, webResource } from '../../experiments/agentdojo/resourceNames';
import { suiteResourceRules } from '../../experiments/agentdojo/suiteResources';

const dataset: Dataset = loadDataset();

describe('resource names for AgentDojo values', () => {
  const tricky = ['', '.', '..', '...', '.hidden', 'a/b', 'a~2Fb', 'a~b', '~', '%2e%2e', 'a b', 'Café', 'Cafe\u0301', 'ｆｕｌｌ', 'a\\b', 'a\u0000b', 'External_0', 'external_0', 'US133000000121212121212'];

  it('turns every value into one canonical path segment', () => {
    for (const value of tricky) expect({ value, canonical: isCanonicalResource(named('slack:/channel/', value)) }).toEqual({ value, canonical: true });
  });

  it('gives different values different names (the encoding is injective)', () => {
    const names = tricky.map(segment);
    expect(new Set(names).size).toBe(tricky.length);
  });

  it('keeps letters, digits and _ @ + . - as they are, and case too', () => {
    expect(segment('Alice_1@x.com+tag-2')).toBe('Alice_1@x.com+tag-2');
    expect(segment('..')).toBe('~2E.');
    expect(segment('a/b')).toBe('a~2Fb');
  });

  it('lowercases mail addresses and web hosts, not web paths', () => {
    expect(addressResource('janeLong@google.com')).toBe('mail:/to/janelong@google.com');
    expect(webResource('WWW.Company-Todo-List.com/Alice')).toBe('web:/www.company-todo-list.com/Alice');
    expect(webResource('https://www.x.com/a/')).toBe('web:/www.x.com/a/~');
  });

  it('names only canonical resources for every ground-truth call of every suite', () => {
    for (const suite of dataset.suites) {
      const rules = suiteResourceRules[suite.name];
      const calls = [...suite.userTasks, ...suite.injectionTasks].flatMap((t) => t.calls);
      for (const call of calls) {
        const names = rules[call.function]?.resources(argumentsOf(call).args) ?? [];
        for (const name of names) expect({ tool: call.function, canonical: isCanonicalResource(name) }).toEqual({ tool: call.function, canonical: true });
      }
    }
  });

  it('builds only canonical scopes from the environment facts', () => {
    for (const suite of dataset.suites) {
      for (const names of factScopes(suite.name, suite.facts).resources.values()) for (const name of names) expect(isCanonicalScope(name)).toBe(true);
    }
  });
});

describe('grants', () => {
  it('never depend on the injection tasks', () => {
    for (const suite of dataset.suites) {
      const registered = new Set(suite.tools.map((t) => t.name));
      const withoutInjections = { ...suite, injectionTasks: [] };
      for (const policy of policyNames) {
        for (const task of suite.userTasks) {
          const facts = factScopes(suite.name, suite.facts);
          expect(grantFor(withoutInjections, task, policy, registered, facts)).toEqual(grantFor(suite, task, policy, registered, facts));
        }
      }
    }
  });

  it('hold exactly the tools of the task, and under B no more resources than under A', () => {
    const banking = dataset.suites.find((s) => s.name === 'banking');
    const task = banking?.userTasks.find((t) => t.id === 'user_task_3');
    if (banking === undefined || task === undefined) throw new Error('banking user_task_3 missing from the data');
    const registered = new Set(banking.tools.map((t) => t.name));
    const facts = factScopes('banking', banking.facts);
    const a = grantFor(banking, task, 'A', registered, facts);
    const b = grantFor(banking, task, 'B', registered, facts);
    expect(a.tools).toEqual(['get_most_recent_transactions', 'send_money']);
    expect(a.resources).toEqual(['bank:/iban/']);
    expect(b.resources).toContain('bank:/iban/GB29NWBK60161331926819');
    expect(b.resources).not.toContain('bank:/iban/');
    expect(a.budget.calls).toBe(4);
  });
});

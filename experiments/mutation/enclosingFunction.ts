import ts from 'typescript';

/** What a mutant outside any function is keyed under (a module-level constant, a top-level statement). */
export const topLevel = '(top level)';

/** The name a function-like node goes by: its own, its variable's, its property's, or its class member's. */
function nameOf(node: ts.Node): string | undefined {
  if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) || ts.isGetAccessor(node) || ts.isSetAccessor(node) || ts.isFunctionExpression(node)) && node.name !== undefined) {
    return node.name.getText();
  }
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  if (ts.isArrowFunction(node) || ts.isFunctionExpression(node)) {
    const parent = node.parent;
    if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) && parent.name !== undefined) return parent.name.getText();
  }
  return undefined;
}

/**
 * The named functions around a 1-based line and column of `source`, outermost first, joined with
 * `.` (`ShardedMap.get`, `decide.admitted`); anonymous callbacks are skipped. A key that survives
 * edits elsewhere in the file, where a line number does not (experiments/mutation/explanations.ts).
 */
export function enclosingFunction(fileName: string, source: string, line: number, column: number): string {
  return functionLocator(fileName, source)(line, column);
}

/** `enclosingFunction` for many positions of one file, parsed once. */
export function functionLocator(fileName: string, source: string): (line: number, column: number) => string {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.ES2022, true);
  return (line, column) => namesAround(file, line, column);
}

function namesAround(file: ts.SourceFile, line: number, column: number): string {
  const lines = file.getLineStarts();
  if (line < 1 || line > lines.length) return topLevel;
  const position = (lines[line - 1] as number) + column - 1;
  const names: string[] = [];
  const visit = (node: ts.Node): void => {
    if (position < node.getStart(file) || position >= node.getEnd()) return;
    if (ts.isClassLike(node) && node.name !== undefined) names.push(node.name.getText());
    else if (ts.isFunctionLike(node)) {
      const name = nameOf(node);
      if (name !== undefined) names.push(name);
    }
    ts.forEachChild(node, visit);
  };
  ts.forEachChild(file, visit);
  return names.length === 0 ? topLevel : names.join('.');
}

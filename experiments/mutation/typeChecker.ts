import path from 'node:path';
import ts from 'typescript';

// A Stryker checker plugin (stryker.config.json: "checkers": ["atc-typescript"]): is a mutant a
// program that compiles? Stryker's own TypeScript checker answers by rebuilding the project in
// watch mode, emitting JavaScript and declarations for every mutant, about a second of CPU per
// mutant on this machine: twenty times the cost of running the mutant's tests, so a mutation run
// was the type checker's run. This one keeps one language service over the mutated files' project
// and, per mutant, type-checks the mutated file; only when the mutant changes what the file declares
// to its importers (its declaration output differs from the original's) does it also type-check
// every file that imports it, directly or not. A file's importers see nothing else of it, so the
// answer is the same as a whole-project build's.
//
// It imports nothing from Stryker (its packages are ES modules; this is CommonJS): a plugin is
// `{ kind, name, injectableClass }` and a class names what it is given in `inject`.

/** Stryker's mutant as a checker receives it: 0-based lines and columns. */
export interface CheckedMutant {
  readonly id: string;
  readonly fileName: string;
  readonly replacement: string;
  readonly location: { readonly start: Position; readonly end: Position };
}
interface Position {
  readonly line: number;
  readonly column: number;
}
export type CheckResult = { readonly status: 'passed' } | { readonly status: 'compileError'; readonly reason: string };

interface ScriptFile {
  readonly original: string;
  text: string;
  version: number;
}

export class MutantTypeChecker {
  static readonly inject = ['options'] as const;
  private readonly files = new Map<string, ScriptFile>();
  private readonly importers = new Map<string, Set<string>>();
  private readonly originalDeclarations = new Map<string, string>();
  private service: ts.LanguageService | undefined;
  private readonly tsconfigFile: string;

  constructor(options: { readonly tsconfigFile?: string }) {
    this.tsconfigFile = path.resolve(options.tsconfigFile ?? 'tsconfig.json');
  }

  async init(): Promise<void> {
    const read = ts.readConfigFile(this.tsconfigFile, (f) => ts.sys.readFile(f));
    if (read.error !== undefined) throw new Error(format([read.error]));
    const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, path.dirname(this.tsconfigFile));
    if (parsed.errors.length > 0) throw new Error(format(parsed.errors));
    // Declarations are asked of the service (never written) to see whether a mutant changes a file's surface.
    const options: ts.CompilerOptions = { ...parsed.options, declaration: true, noEmit: false, emitDeclarationOnly: true, sourceMap: false, declarationMap: false, incremental: false, composite: false };
    for (const name of parsed.fileNames) this.fileAt(name);
    const host: ts.LanguageServiceHost = {
      getCompilationSettings: () => options,
      getScriptFileNames: () => [...parsed.fileNames],
      getScriptVersion: (name) => String(this.files.get(path.resolve(name))?.version ?? 0),
      getScriptSnapshot: (name) => {
        const file = this.fileAt(name);
        return file === undefined ? undefined : ts.ScriptSnapshot.fromString(file.text);
      },
      getCurrentDirectory: () => path.dirname(this.tsconfigFile),
      getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
      fileExists: (name) => ts.sys.fileExists(name),
      readFile: (name) => ts.sys.readFile(name),
      readDirectory: (...args) => ts.sys.readDirectory(...args),
      directoryExists: (name) => ts.sys.directoryExists(name),
      getDirectories: (name) => ts.sys.getDirectories(name),
    };
    this.service = ts.createLanguageService(host, ts.createDocumentRegistry());
    const program = this.service.getProgram();
    if (program === undefined) throw new Error('the TypeScript project did not load');
    const errors = ts.getPreEmitDiagnostics(program).filter((d) => d.category === ts.DiagnosticCategory.Error);
    if (errors.length > 0) throw new Error(`the unmutated project does not type-check:\n${format(errors)}`);
    for (const source of program.getSourceFiles()) {
      if (source.isDeclarationFile || !this.files.has(path.resolve(source.fileName))) continue;
      for (const imported of importsOf(source, options)) {
        const set = this.importers.get(imported) ?? new Set<string>();
        set.add(path.resolve(source.fileName));
        this.importers.set(imported, set);
      }
    }
  }

  async check(mutants: readonly CheckedMutant[]): Promise<Record<string, CheckResult>> {
    const out: Record<string, CheckResult> = {};
    for (const mutant of mutants) out[mutant.id] = this.checkOne(mutant);
    return out;
  }

  private checkOne(mutant: CheckedMutant): CheckResult {
    const service = this.service;
    const name = path.resolve(mutant.fileName);
    const file = this.files.get(name);
    // A file outside the project cannot break its build.
    if (service === undefined || file === undefined) return { status: 'passed' };
    file.text = applied(file.original, mutant);
    file.version++;
    try {
      const own = [...service.getSyntacticDiagnostics(name), ...service.getSemanticDiagnostics(name)].filter(isError);
      if (own.length > 0) return { status: 'compileError', reason: format(own) };
      if (this.declarationOf(name) === this.originalDeclaration(name)) return { status: 'passed' };
      for (const importer of this.importersOf(name)) {
        const errors = service.getSemanticDiagnostics(importer).filter(isError);
        if (errors.length > 0) return { status: 'compileError', reason: format(errors) };
      }
      return { status: 'passed' };
    } finally {
      file.text = file.original;
      file.version++;
    }
  }

  private originalDeclaration(name: string): string {
    const known = this.originalDeclarations.get(name);
    if (known !== undefined) return known;
    const file = this.files.get(name) as ScriptFile;
    const mutated = file.text;
    file.text = file.original;
    file.version++;
    const declaration = this.declarationOf(name);
    file.text = mutated;
    file.version++;
    this.originalDeclarations.set(name, declaration);
    return declaration;
  }

  private declarationOf(name: string): string {
    const output = (this.service as ts.LanguageService).getEmitOutput(name, true);
    return output.outputFiles.map((f) => f.text).join('\n');
  }

  /** Every project file that imports `name`, directly or through other files. */
  private importersOf(name: string): string[] {
    const seen = new Set<string>();
    const queue = [name];
    while (queue.length > 0) {
      for (const importer of this.importers.get(queue.pop() as string) ?? []) {
        if (!seen.has(importer)) {
          seen.add(importer);
          queue.push(importer);
        }
      }
    }
    seen.delete(name);
    return [...seen];
  }

  private fileAt(name: string): ScriptFile | undefined {
    const key = path.resolve(name);
    const known = this.files.get(key);
    if (known !== undefined) return known;
    // Only the project's own sources are kept (and mutated); libraries are read when asked.
    if (key.includes(`${path.sep}node_modules${path.sep}`)) {
      const text = ts.sys.readFile(key);
      return text === undefined ? undefined : { original: text, text, version: 0 };
    }
    const text = ts.sys.readFile(key);
    if (text === undefined) return undefined;
    const file = { original: text, text, version: 0 };
    this.files.set(key, file);
    return file;
  }
}

function applied(original: string, mutant: CheckedMutant): string {
  const lines = ts.createSourceFile('m.ts', original, ts.ScriptTarget.Latest, false);
  const start = lines.getPositionOfLineAndCharacter(mutant.location.start.line, mutant.location.start.column);
  const end = lines.getPositionOfLineAndCharacter(mutant.location.end.line, mutant.location.end.column);
  return `${original.slice(0, start)}${mutant.replacement}${original.slice(end)}`;
}

function importsOf(source: ts.SourceFile, options: ts.CompilerOptions): string[] {
  const out: string[] = [];
  for (const statement of source.statements) {
    const specifier =
      (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) && statement.moduleSpecifier !== undefined && ts.isStringLiteral(statement.moduleSpecifier)
        ? statement.moduleSpecifier.text
        : undefined;
    if (specifier === undefined) continue;
    const resolved = ts.resolveModuleName(specifier, source.fileName, options, ts.sys).resolvedModule;
    if (resolved !== undefined && !resolved.isExternalLibraryImport) out.push(path.resolve(resolved.resolvedFileName));
  }
  return out;
}

const isError = (d: ts.Diagnostic): boolean => d.category === ts.DiagnosticCategory.Error;

function format(diagnostics: readonly ts.Diagnostic[]): string {
  return ts.formatDiagnostics(diagnostics, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => process.cwd(), getNewLine: () => '\n' });
}

/** What Stryker loads from this module (stryker.config.json "plugins"). */
export const strykerPlugins = [{ kind: 'Checker', name: 'atc-typescript', injectableClass: MutantTypeChecker }];

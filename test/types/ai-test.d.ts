// `ai/test` is a package-exports subpath; our TypeScript resolution (node10) reads no exports map,
// so point the typings at the file the export names (jest and Node resolve the export itself).
declare module 'ai/test' {
  export * from 'ai/dist/test/index';
}

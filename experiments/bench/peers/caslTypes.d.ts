// Our tsconfig resolves modules the Node 10 way, which ignores package.json "exports"; CASL ships its
// typings only there, so point the bare specifier at them.
declare module '@casl/ability' {
  export * from '@casl/ability/dist/types/index';
}

/** Every queue, size and count the ledger handles has a maximum. Qualifier last: `…Max`. */
export const limits = {
  /** Commands waiting in the serialized stream before new ones are rejected `ledger_unavailable`. */
  pendingCommandsMax: 100_000,
  /** Commands decided and appended in one batch (one store transaction). */
  batchCommandsMax: 4_096,
  /** Canonical JSON of one call's arguments, in UTF-8 bytes. Larger calls are `invalid_arguments`. */
  argumentBytesMax: 1_048_576,
  /** Nesting depth of arguments. Deeper calls are `invalid_arguments`. */
  argumentDepthMax: 64,
  /** Subschema nesting of a tool schema or narrowing (deeper ones are refused when registered or issued). */
  schemaNestingMax: 64,
  /** JSON values of a tool schema or narrowing with every `$ref` unfolded (larger ones are refused). */
  schemaNodesMax: 100_000,
  /**
   * Work an agent's own narrowings may cost one call: the weight of their sub-schemas applied to every
   * item or member (see src/tools/schemaBounds.ts) times the call's canonical bytes, summed over the
   * narrowings made by `attenuate` along the grant's chain. A call over it is `argument_not_permitted`.
   */
  narrowingWorkMax: 4_194_304,
  /**
   * Characters of a string checked against a format whose values are short by nature (dates, times,
   * durations, e-mail addresses, host names, IP addresses, UUIDs, regexes): a longer string fails it.
   */
  formatCharsMax: 1_024,
  /** Resources one call may name. */
  resourcesPerCallMax: 256,
  /** UTF-8 bytes of one resource, and of one of its path segments. */
  resourceBytesMax: 1_024,
  segmentBytesMax: 255,
  /** Characters of a token presented by an agent; longer ones are `unknown_token` without being hashed (issued tokens have 47). */
  tokenCharsMax: 128,
  /** Pause before retrying a settlement the store refused; doubles per attempt up to the max (never gives up while open). */
  settleRetryMinMs: 10,
  settleRetryMaxMs: 1_000,
  /** Scopes and tools one grant may hold. */
  scopesPerGrantMax: 1_024,
  toolsPerGrantMax: 1_024,
  /** Ancestors a grant may have: a root is at depth 0, its child at 1. `attenuate` beyond it widens. */
  delegationDepthMax: 8,
  /** Grants that may ever be issued below one root (by attenuate, at any depth). Beyond it, attenuate widens. */
  delegatedGrantsPerRootMax: 10_000,
  /** Canonical JSON of one attenuation request, in UTF-8 bytes. Larger requests are `attenuation_invalid`. */
  attenuationBytesMax: 65_536,
  /** Characters (UTF-16 code units) of an idempotency key; a longer or empty one is `invalid_arguments`. */
  idempotencyKeyCharsMax: 255,
  /**
   * Unexpired idempotency bindings one delegation tree (a root and all its descendants) may hold: the
   * default and the most of the ledger option `idempotencyKeysPerTreeMax`. A new keyed call beyond it
   * is `idempotency_keys_exhausted`.
   */
  idempotencyKeysPerTreeMax: 10_000,
  /** Outcomes (values, errors) of keyed calls one ledger object keeps in memory for replays; the oldest is forgotten first. */
  idempotentOutcomesHeldMax: 10_000,
  /** Redirects one `ctx.fetch` follows; the next one is refused `redirect_limit`. */
  redirectsMax: 10,
  /** Named meters one grant may cap, and one tool's `cost(args)` or `ctx.report` may name. */
  metersPerGrantMax: 16,
  /**
   * A rate window's `calls`: each grant with a rate keeps a ring of its last `calls` admission times
   * (copied on each admission on it), so memory and the per-call cost grow with it.
   */
  rateCallsMax: 10_000,
} as const;

/** A meter name: lower-case letters, digits and `_`, starting with a letter (e.g. `usd_micros`). */
export const meterNamePattern = /^[a-z][a-z0-9_]{0,63}$/;

/** MCP's rule for tool names (case-sensitive). */
export const toolNamePattern = /^[A-Za-z0-9_.-]{1,128}$/;

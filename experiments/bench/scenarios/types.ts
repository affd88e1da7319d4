import type { Figures } from '../stats';

/** What one scenario reports: figures per contender, derived numbers, and its target check. */
export interface ScenarioResult {
  readonly id: string;
  readonly title: string;
  readonly figures: Record<string, Figures>;
  readonly derived: Record<string, number | string | boolean>;
  readonly target?: { readonly description: string; readonly value: number; readonly limit: number; readonly pass: boolean };
  readonly notes?: readonly string[];
  /** Why this run checks no target for a scenario that has one (e.g. --quick's sizes). */
  readonly noTarget?: string;
  readonly skipped?: string;
}

export interface BenchContext {
  readonly quick: boolean;
  log(line: string): void;
}

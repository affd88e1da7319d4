/** Rejections per reason per time bucket, in the column layout uPlot draws. */
export interface ReasonSeries {
  /** Bucket start times, in seconds since epoch. */
  readonly xs: number[];
  readonly reasons: string[];
  /** counts[r][b]: rejections with reasons[r] in bucket b. */
  readonly counts: number[][];
  readonly bucketMs: number;
}

const widthsMs = [1_000, 5_000, 15_000, 60_000, 300_000, 900_000, 3_600_000, 21_600_000, 86_400_000, 604_800_000];
/** The chart never has more buckets than this, whatever span the log covers. */
export const bucketsMax = 120;

/** Buckets the rejections (time `at` in ms, `reason`) by the narrowest width that fits `bucketsMax`. */
export function reasonSeries(rejections: readonly { readonly at: number; readonly reason: string }[]): ReasonSeries {
  if (rejections.length === 0) return { xs: [], reasons: [], counts: [], bucketMs: widthsMs[0] as number };
  let first = Infinity;
  let last = -Infinity;
  for (const r of rejections) {
    if (r.at < first) first = r.at;
    if (r.at > last) last = r.at;
  }
  const bucketMs = widthsMs.find((w) => Math.floor(last / w) - Math.floor(first / w) < bucketsMax) ?? (widthsMs[widthsMs.length - 1] as number);
  const start = Math.floor(first / bucketMs);
  const buckets = Math.min(bucketsMax, Math.floor(last / bucketMs) - start + 1);
  const reasonIndex = new Map<string, number>();
  const counts: number[][] = [];
  for (const r of rejections) {
    let index = reasonIndex.get(r.reason);
    if (index === undefined) {
      index = counts.length;
      reasonIndex.set(r.reason, index);
      counts.push(new Array<number>(buckets).fill(0));
    }
    const bucket = Math.min(buckets - 1, Math.floor(r.at / bucketMs) - start);
    (counts[index] as number[])[bucket]! += 1;
  }
  const xs = Array.from({ length: buckets }, (_, b) => ((start + b) * bucketMs) / 1000);
  return { xs, reasons: [...reasonIndex.keys()], counts, bucketMs };
}

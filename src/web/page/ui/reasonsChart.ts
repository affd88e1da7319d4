import uPlot from 'uplot';
import { reasonSeries, type ReasonSeries } from '../reasonBuckets';
import { el } from './dom';

const palette = ['#c0392b', '#d35400', '#8e44ad', '#2c3e50', '#16a085', '#b7950b', '#7f8c8d', '#1f618d', '#a93226', '#117a65', '#6c3483', '#873600', '#5d6d7e', '#239b56', '#9a7d0a'];
const wholeSteps = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 1_000_000];

/**
 * Rejections per reason over time as stacked bars, buckets sized to the span of the log. uPlot has
 * no stacking of its own: each reason is drawn as the running total up to it, tallest first, so the
 * visible band of each colour is that reason's own count (which the legend shows).
 */
export class ReasonsChart {
  private plot: uPlot | undefined;
  private key = '';
  private series: ReasonSeries | undefined;
  private readonly empty: HTMLElement;

  constructor(private readonly container: HTMLElement) {
    this.empty = el('p', { class: 'more' }, 'no rejections yet');
    container.append(this.empty);
    new ResizeObserver(() => this.plot?.setSize(this.size())).observe(container);
  }

  update(rejections: readonly { at: number; reason: string }[]): void {
    const series = reasonSeries(rejections);
    this.series = series;
    this.empty.hidden = series.xs.length > 0;
    if (series.xs.length === 0) return;
    const key = `${series.bucketMs}\n${series.reasons.join('\n')}`;
    const data = stackedData(series);
    if (this.plot === undefined || key !== this.key) {
      this.plot?.destroy();
      this.key = key;
      this.plot = new uPlot(this.options(series), data, this.container);
    } else this.plot.setData(data);
    this.container.dataset.reasons = series.reasons.join(',');
    this.container.dataset.total = String(rejections.length);
  }

  private options(series: ReasonSeries): uPlot.Options {
    const half = series.bucketMs / 2000;
    const bars = uPlot.paths.bars?.({ size: [0.8, 40] });
    return {
      ...this.size(),
      // Half a bucket of room on each side, so a single bucket still gets a sensible time axis.
      scales: { x: { time: true, range: () => this.timeRange(half) }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
      axes: [{}, { label: `rejections per ${label(series.bucketMs)}`, incrs: wholeSteps }],
      series: [
        {},
        ...series.reasons
          .map((reason, i) => ({
            label: reason,
            stroke: palette[i % palette.length] as string,
            fill: palette[i % palette.length] as string,
            width: 0,
            points: { show: false },
            ...(bars !== undefined ? { paths: bars } : {}),
            value: (_u: uPlot, _v: number | null, _s: number, idx: number | null) => (idx === null ? '--' : String(this.series?.counts[i]?.[idx] ?? 0)),
          }))
          .reverse()
      ],
      legend: { show: true },
    };
  }

  /** The buckets' span, from the data itself (uPlot widens a lone point's range to a day). */
  private timeRange(half: number): uPlot.Range.MinMax {
    const xs = this.series?.xs ?? [];
    return xs.length === 0 ? [0, 1] : [(xs[0] as number) - half, (xs[xs.length - 1] as number) + half];
  }

  private size(): { width: number; height: number } {
    return { width: Math.max(300, this.container.clientWidth - 8), height: 220 };
  }
}

/** x, then the running totals from the last reason's down to the first's (see the class comment). */
function stackedData(series: ReasonSeries): uPlot.AlignedData {
  const totals: number[][] = [];
  let running = new Array<number>(series.xs.length).fill(0);
  for (const counts of series.counts) {
    running = running.map((sum, b) => sum + (counts[b] ?? 0));
    totals.push(running);
  }
  return [series.xs, ...totals.reverse()];
}

function label(ms: number): string {
  return ms < 60_000 ? `${ms / 1000} s` : ms < 3_600_000 ? `${ms / 60_000} min` : ms < 86_400_000 ? `${ms / 3_600_000} h` : `${ms / 86_400_000} d`;
}

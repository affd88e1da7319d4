import uPlot from 'uplot';
import { reasonSeries, type ReasonSeries } from '../reasonBuckets';
import { el } from './dom';

const palette = ['#c0392b', '#d35400', '#8e44ad', '#2c3e50', '#16a085', '#b7950b', '#7f8c8d', '#1f618d', '#a93226', '#117a65', '#6c3483', '#873600', '#5d6d7e', '#239b56', '#9a7d0a'];

/** Rejections per reason over time: one line per reason, buckets sized to the span of the log. */
export class ReasonsChart {
  private plot: uPlot | undefined;
  private reasonsKey = '';
  private readonly empty: HTMLElement;

  constructor(private readonly container: HTMLElement) {
    this.empty = el('p', { class: 'more' }, 'no rejections yet');
    container.append(this.empty);
    new ResizeObserver(() => this.plot?.setSize(this.size())).observe(container);
  }

  update(rejections: readonly { at: number; reason: string }[]): void {
    const series = reasonSeries(rejections);
    this.empty.hidden = series.xs.length > 0;
    if (series.xs.length === 0) return;
    const key = `${series.bucketMs}\n${series.reasons.join('\n')}`;
    const data = [series.xs, ...series.counts] as uPlot.AlignedData;
    if (this.plot === undefined || key !== this.reasonsKey) {
      this.plot?.destroy();
      this.reasonsKey = key;
      this.plot = new uPlot(this.options(series), data, this.container);
    } else this.plot.setData(data);
    this.container.dataset.reasons = series.reasons.join(',');
    this.container.dataset.total = String(rejections.length);
  }

  private options(series: ReasonSeries): uPlot.Options {
    return {
      ...this.size(),
      // Half a bucket of room on each side, so a single bucket still gets a sensible time axis.
      scales: { x: { time: true, range: (_u, min, max) => [min - series.bucketMs / 2000, max + series.bucketMs / 2000] }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
      axes: [{}, { label: `rejections per ${label(series.bucketMs)}` }],
      series: [{}, ...series.reasons.map((reason, i) => ({ label: reason, stroke: palette[i % palette.length] as string, width: 2, points: { show: true, size: 4 } }))],
      legend: { show: true },
    };
  }

  private size(): { width: number; height: number } {
    return { width: Math.max(300, this.container.clientWidth - 8), height: 220 };
  }
}

function label(ms: number): string {
  return ms < 60_000 ? `${ms / 1000} s` : ms < 3_600_000 ? `${ms / 60_000} min` : ms < 86_400_000 ? `${ms / 3_600_000} h` : `${ms / 86_400_000} d`;
}

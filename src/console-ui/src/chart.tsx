/** A time-series chart (uPlot, bundled; no CDN), sized to its container, following the theme's colours. */
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface Series {
  label: string;
  values: (number | null)[];
}

const COLORS = ['#4f7cff', '#e5533d', '#2aa876', '#d49a00', '#9b59b6', '#16a2b8', '#e83e8c', '#6c757d'];

export function TimeChart({ title, times, series, format }: { title: string; times: number[]; series: Series[]; format: (v: number) => string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const css = getComputedStyle(document.documentElement);
    const fg = css.getPropertyValue('--muted').trim() || '#888';
    const grid = css.getPropertyValue('--border').trim() || '#ddd';
    const axis = { stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid } };
    const opts: uPlot.Options = {
      width: Math.max(el.clientWidth, 200),
      height: 180,
      legend: { show: series.length > 1 },
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
      axes: [axis, { ...axis, size: 80, values: (_u, ticks) => ticks.map((t) => format(t)) }],
      series: [{}, ...series.map((s, i) => ({ label: s.label, stroke: COLORS[i % COLORS.length], width: 2, points: { show: times.length < 40 }, value: (_u: uPlot, v: number | null) => (v === null ? '—' : format(v)) }))],
    };
    const plot = new uPlot(opts, [times, ...series.map((s) => s.values)] as uPlot.AlignedData, el);
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(el.clientWidth, 200), height: 180 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [times, series, format]);
  return (
    <figure className="chart" aria-label={title}>
      <figcaption>{title}</figcaption>
      <div ref={box} role="img" aria-label={`${title} over time`} />
    </figure>
  );
}

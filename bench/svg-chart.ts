/**
 * A hand-written SVG line chart (no dependencies): one or more panels side by
 * side, each with its own axes, a log or linear x axis and several series.
 */

export interface Series {
  name: string;
  color: string;
  points: Array<[number, number]>;
  dashed?: boolean;
  /** Print each point's y value next to it. */
  labels?: boolean;
}

export interface Panel {
  title: string;
  xLabel: string;
  yLabel: string;
  xLog?: boolean;
  /** Ticks on the x axis; defaults to the x values of the data. */
  xTicks?: number[];
  series: Series[];
}

export interface ChartOptions {
  title: string;
  subtitle?: string;
  panels: Panel[];
  panelWidth?: number;
  panelHeight?: number;
}

const esc = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function fmt(value: number): string {
  if (value === 0) return '0';
  const abs = Math.abs(value);
  if (abs >= 100) return String(Math.round(value));
  if (abs >= 10) return value.toFixed(1).replace(/\.0$/, '');
  return value.toFixed(2).replace(/0+$/, '').replace(/\.$/, '');
}

/** About five round tick values from 0 to at least max. */
function niceTicks(max: number): number[] {
  if (!(max > 0)) return [0, 1];
  const rough = max / 5;
  const mag = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= rough) ?? 10 * mag;
  const ticks: number[] = [];
  for (let v = 0; v < max + step * 0.999; v += step) ticks.push(Number(v.toPrecision(12)));
  return ticks;
}

function panelSvg(panel: Panel, x0: number, y0: number, w: number, h: number): string {
  const margin = { left: 64, right: 18, top: 34, bottom: 48 };
  const pw = w - margin.left - margin.right;
  const ph = h - margin.top - margin.bottom;
  const all = panel.series.flatMap((s) => s.points);
  const xs = all.map(([x]) => x);
  const yTicks = niceTicks(Math.max(...all.map(([, y]) => y), 0) * 1.05);
  const yMax = yTicks[yTicks.length - 1];
  let xMin = Math.min(...xs);
  let xMax = Math.max(...xs);
  if (xMin === xMax) {
    xMin = panel.xLog ? xMin / 2 : xMin - 1;
    xMax = panel.xLog ? xMax * 2 : xMax + 1;
  }
  const tx = panel.xLog ? (x: number) => Math.log10(x) : (x: number) => x;
  const sx = (x: number) => x0 + margin.left + ((tx(x) - tx(xMin)) / (tx(xMax) - tx(xMin))) * pw;
  const sy = (y: number) => y0 + margin.top + ph - (y / yMax) * ph;
  const out: string[] = [];
  out.push(
    `<text x="${x0 + margin.left + pw / 2}" y="${y0 + 20}" text-anchor="middle" font-size="14" font-weight="bold">${esc(panel.title)}</text>`,
  );
  // Grid and y ticks.
  for (const t of yTicks) {
    out.push(
      `<line x1="${x0 + margin.left}" y1="${sy(t)}" x2="${x0 + margin.left + pw}" y2="${sy(t)}" stroke="#e4e4e4"/>`,
    );
    out.push(
      `<text x="${x0 + margin.left - 6}" y="${sy(t) + 4}" text-anchor="end" font-size="11">${fmt(t)}</text>`,
    );
  }
  const xTicks = panel.xTicks ?? [...new Set(xs)].sort((a, b) => a - b);
  for (const t of xTicks) {
    out.push(
      `<line x1="${sx(t)}" y1="${y0 + margin.top + ph}" x2="${sx(t)}" y2="${y0 + margin.top + ph + 5}" stroke="#333"/>`,
    );
    out.push(
      `<text x="${sx(t)}" y="${y0 + margin.top + ph + 18}" text-anchor="middle" font-size="11">${fmt(t)}</text>`,
    );
  }
  out.push(
    `<rect x="${x0 + margin.left}" y="${y0 + margin.top}" width="${pw}" height="${ph}" fill="none" stroke="#333"/>`,
  );
  out.push(
    `<text x="${x0 + margin.left + pw / 2}" y="${y0 + h - 8}" text-anchor="middle" font-size="12">${esc(panel.xLabel)}</text>`,
  );
  const cy = y0 + margin.top + ph / 2;
  out.push(
    `<text x="${x0 + 16}" y="${cy}" text-anchor="middle" font-size="12" transform="rotate(-90 ${x0 + 16} ${cy})">${esc(panel.yLabel)}</text>`,
  );
  // Series.
  panel.series.forEach((s, i) => {
    const pts = s.points.map(([x, y]) => `${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join(' ');
    out.push(
      `<polyline points="${pts}" fill="none" stroke="${s.color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''}/>`,
    );
    if (!s.dashed) {
      for (const [x, y] of s.points) {
        out.push(`<circle cx="${sx(x).toFixed(1)}" cy="${sy(y).toFixed(1)}" r="3.5" fill="${s.color}"/>`);
        // Labels of points at the right edge go to their left, so they stay inside the panel.
        const atRight = sx(x) > x0 + margin.left + pw - 30;
        if (s.labels)
          out.push(
            `<text x="${(sx(x) + (atRight ? -6 : 5)).toFixed(1)}" y="${(sy(y) - 7).toFixed(1)}" font-size="10" fill="${s.color}"${atRight ? ' text-anchor="end"' : ''}>${fmt(y)}</text>`,
          );
      }
    }
    const ly = y0 + margin.top + 14 + i * 16;
    const lx = x0 + margin.left + 10;
    out.push(
      `<line x1="${lx}" y1="${ly - 4}" x2="${lx + 22}" y2="${ly - 4}" stroke="${s.color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''}/>`,
    );
    out.push(`<text x="${lx + 28}" y="${ly}" font-size="11">${esc(s.name)}</text>`);
  });
  return out.join('\n');
}

export function lineChartSvg(options: ChartOptions): string {
  const pw = options.panelWidth ?? 440;
  const ph = options.panelHeight ?? 320;
  const header = options.subtitle ? 52 : 34;
  const width = pw * options.panels.length;
  const height = ph + header;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${width / 2}" y="22" text-anchor="middle" font-size="16" font-weight="bold">${esc(options.title)}</text>`,
    ...(options.subtitle
      ? [
          `<text x="${width / 2}" y="40" text-anchor="middle" font-size="12" fill="#555">${esc(options.subtitle)}</text>`,
        ]
      : []),
    ...options.panels.map((p, i) => panelSvg(p, i * pw, header, pw, ph)),
    '</svg>',
  ];
  return `${parts.join('\n')}\n`;
}

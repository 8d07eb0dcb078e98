// What a tile shows, from the data Eddy's live stream sends for it ({tile_id, name, kind, display,
// funnel_viz_type, result, last_refresh, error, text}): pure functions, no DOM.
//
// Every view carries `values` and `total`, which the page exposes as data attributes (data-values, data-total) so
// that a test, or a curious reader, can see exactly what is drawn:
//   trend lines:  values = each series' data points, total = the first series' count;
//   stickiness:   the same, over "1 day", "2 days", ... (the persons active on exactly that many days);
//   lifecycles:   stacked bars, values = each status's data points (dormant negative), total = the new persons;
//   retention:    a table, a row per cohort (or breakdown value), values = each row's counts, total = the first row's size;
//   paths:        a table of flows (from, to, how many), values = each edge's count, total = the flows from the first step;
//   total values: values = each series' aggregated_value, total = the first one's (what a bold number shows);
//   funnels:      values = each step's count (the first breakdown value's), total = the first step's count.

/** Trend displays that show one number per series instead of a line (PostHog's total-value displays). */
const TOTAL_VALUE_DISPLAYS = new Set(['BoldNumber', 'ActionsPie', 'ActionsBarValue', 'ActionsTable', 'WorldMap']);

export const PALETTE = ['#1d4aff', '#f7a501', '#30a46c', '#e5484d', '#8e4ec6', '#0091ff', '#d6409f', '#ad7f58'];

/** A tile known only from the dashboard's JSON, before the stream's first snapshot. */
export function pending(tile) {
  const insight = tile.insight;
  return {
    tile_id: tile.id,
    name: insight ? insight.name || insight.derived_name || '' : '',
    kind: insight ? 'pending' : 'text',
    text: tile.text && typeof tile.text.body === 'string' ? tile.text.body : '',
  };
}

export function describe(tile) {
  if (tile.kind === 'text') {
    return { type: 'text', text: tile.text ?? '', values: null, total: null };
  }
  if (tile.error) {
    return note(tile.error, 'error');
  }
  if (tile.kind === 'pending') {
    return note('Waiting for live results…');
  }
  if (!['trend', 'funnel', 'stickiness', 'lifecycle', 'retention', 'paths'].includes(tile.kind)) {
    return note(tile.kind === 'nothing' ? 'This insight has no query yet.' : 'This kind of insight is not drawn here.');
  }
  if (tile.result == null) {
    return note('No result yet.');
  }
  if (tile.kind === 'stickiness') {
    return stickiness(tile);
  }
  if (tile.kind === 'lifecycle') {
    return lifecycle(tile);
  }
  if (tile.kind === 'retention') {
    return retention(tile);
  }
  if (tile.kind === 'paths') {
    return paths(tile);
  }
  return tile.kind === 'trend' ? trend(tile) : funnel(tile);
}

/** A lifecycle as PostHog draws it: a bar per interval, its statuses stacked, the dormant below zero. */
const LIFECYCLE_COLORS = { new: '#1d4aff', returning: '#30a46c', resurrecting: '#8e4ec6', dormant: '#e5484d' };

function lifecycle(tile) {
  const statuses = Array.isArray(tile.result) ? tile.result : [];
  if (!statuses.length) {
    return note('No events in this range.');
  }
  const values = statuses.map((s) => (Array.isArray(s.data) ? s.data.map(number) : []));
  return {
    type: 'bar',
    horizontal: false,
    stacked: true,
    labels: statuses[0].labels ?? statuses[0].days ?? [],
    datasets: statuses.map((s, i) => ({
      label: s.status,
      data: values[i],
      backgroundColor: LIFECYCLE_COLORS[s.status] ?? PALETTE[i % PALETTE.length],
    })),
    values,
    total: number(statuses[0].count),
  };
}

/**
 * Retention as PostHog's table shows it: a row per cohort (its start) or breakdown value, its size, then the share of
 * it that came back in each period after (the first, the cohort itself, 100%).
 */
function retention(tile) {
  const rows = Array.isArray(tile.result) ? tile.result : [];
  if (!rows.length) {
    return note('No cohorts in this range.');
  }
  const values = rows.map((r) => (Array.isArray(r.values) ? r.values.map((v) => number(v.count)) : []));
  const periods = Math.max(...values.map((v) => v.length));
  const period = String(rows[0].label ?? '').split(' ')[0] || 'Period';
  return {
    type: 'table',
    headers: ['Cohort', 'Size', ...Array.from({ length: periods }, (_, k) => `${period} ${k}`)],
    rows: rows.map((r, i) => [
      r.date ? cohortDate(r.date, period) : String(r.label ?? ''),
      String(values[i][0] ?? 0),
      ...values[i].map((count) => percent(count, values[i][0])),
    ]),
    values,
    total: values[0][0] ?? 0,
  };
}

/** Paths as a list of flows: each edge's steps ("1_/home" is step 1 at /home) and how many took it, most taken first. */
function paths(tile) {
  const edges = Array.isArray(tile.result) ? tile.result : [];
  if (!edges.length) {
    return note('No paths in this range.');
  }
  const values = edges.map((e) => number(e.value));
  return {
    type: 'table',
    headers: ['From', 'To', 'Count'],
    rows: edges.map((e, i) => [String(e.source ?? ''), String(e.target ?? ''), String(values[i])]),
    values,
    total: edges.reduce((sum, e, i) => sum + (String(e.source ?? '').startsWith('1_') ? values[i] : 0), 0),
  };
}

/** A cohort's start as its row names it: the day, with the hour for hourly periods. */
function cohortDate(date, period) {
  const text = String(date);
  return period === 'Hour' ? text.slice(0, 16).replace('T', ' ') : text.slice(0, 10);
}

/** Stickiness as PostHog draws it: a line per series over its intervals' labels ("1 day", "2 days", ...). */
function stickiness(tile) {
  const view = trend({ ...tile, display: 'ActionsLineGraph' });
  const series = Array.isArray(tile.result) ? tile.result : [];
  return view.type === 'line' && series.length ? { ...view, labels: series[0].labels ?? view.labels } : view;
}

function note(text, type = 'note') {
  return { type, text, values: null, total: null };
}

function trend(tile) {
  const series = Array.isArray(tile.result) ? tile.result : [];
  const display = tile.display || 'ActionsLineGraph';
  if (TOTAL_VALUE_DISPLAYS.has(display)) {
    const values = series.map((s) => number(s.aggregated_value ?? s.count));
    const total = values.length ? values[0] : 0;
    if (display === 'BoldNumber') {
      return { type: 'number', number: total, values, total };
    }
    return {
      type: 'bar',
      horizontal: true,
      labels: series.map(seriesLabel),
      datasets: [{ label: tile.name || 'Total', data: values, backgroundColor: series.map((_, i) => PALETTE[i % PALETTE.length]) }],
      values,
      total,
    };
  }
  if (series.length === 0) {
    return note('No events in this range.');
  }
  const values = series.map((s) => (Array.isArray(s.data) ? s.data.map(number) : []));
  const color = (i) => PALETTE[i % PALETTE.length];
  return {
    type: display === 'ActionsBar' ? 'bar' : 'line',
    horizontal: false,
    labels: series[0].days ?? series[0].labels ?? [],
    datasets: series.map((s, i) => ({
      label: seriesLabel(s),
      data: values[i],
      borderColor: color(i),
      backgroundColor: color(i),
      tension: 0,
      pointRadius: 2,
    })),
    values,
    total: number(series[0].count),
  };
}

function funnel(tile) {
  if (tile.funnel_viz_type && tile.funnel_viz_type !== 'steps') {
    return note(`This funnel view (${tile.funnel_viz_type}) is not drawn here.`);
  }
  const result = Array.isArray(tile.result) ? tile.result : [];
  // Broken down, a funnel is one list of steps per breakdown value.
  const groups = result.length && Array.isArray(result[0]) ? result : [result];
  const steps = groups[0];
  if (!steps.length) {
    return { ...note('Nobody entered this funnel yet.'), values: [], total: 0 };
  }
  const first = number(steps[0].count);
  const values = steps.map((s) => number(s.count));
  return {
    type: 'bar',
    horizontal: false,
    labels: steps.map((s, i) => [stepName(s, i), `${values[i]} · ${percent(values[i], first)}`]),
    datasets: groups.map((g, i) => ({
      label: groups.length > 1 ? breakdownLabel(g[0]) : 'Persons',
      data: g.map((s) => number(s.count)),
      backgroundColor: PALETTE[i % PALETTE.length],
    })),
    values,
    total: first,
  };
}

function stepName(step, index) {
  return String(step.custom_name || step.name || `Step ${index + 1}`);
}

function breakdownLabel(step) {
  const value = step && step.breakdown_value;
  return Array.isArray(value) ? value.join(', ') : String(value ?? '');
}

function seriesLabel(series) {
  let label = String(series.label ?? series.action?.name ?? '');
  if (series.breakdown_value != null) {
    label += ` · ${Array.isArray(series.breakdown_value) ? series.breakdown_value.join(', ') : series.breakdown_value}`;
  }
  if (series.compare_label) {
    label += ` (${series.compare_label})`;
  }
  return label;
}

/** Conversion from the first step, as PostHog shows it. */
export function percent(count, first) {
  if (!first) {
    return '0%';
  }
  return `${Math.round((count / first) * 1000) / 10}%`;
}

function number(value) {
  const n = Number(value);
  return Number.isFinite(n) ? n : 0;
}

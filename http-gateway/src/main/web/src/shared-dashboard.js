// The page of a publicly shared dashboard (/shared/:access_token): reads the dashboard (JSON) for its name and
// tiles, then follows /shared/:access_token/stream (Server-Sent Events): the `dashboard` event draws every tile
// with fresh results, each `tile` event redraws one in place, `gone` ends the page's life. Text from the data only
// ever reaches the DOM as text (textContent, attributes, Chart.js labels drawn on a canvas): never as markup.
import './shared-dashboard.css';
import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
} from 'chart.js';
import { describe, pending } from './tiles.js';

Chart.register(BarController, BarElement, CategoryScale, Legend, LinearScale, LineController, LineElement, PointElement, Tooltip);

const token = location.pathname.split('/')[2] ?? '';
const tilesElement = document.getElementById('tiles');
/** Tile id → its section, title, body, footer and chart. */
const shown = new Map();
const numberFormat = new Intl.NumberFormat(undefined, { maximumFractionDigits: 2 });
/** How long the page waits before listening again after the server refused the stream. */
const RECONNECT_MS = 5000;

start();

async function start() {
  let response;
  try {
    response = await fetch(`/shared/${token}`, { headers: { Accept: 'application/json' } });
  } catch (e) {
    end('The dashboard could not be loaded.');
    return;
  }
  const body = response.ok ? await response.json() : null;
  if (!body || !body.dashboard) {
    end(response.ok ? 'This link shares an insight, which this page does not show.' : 'This dashboard is not shared.');
    return;
  }
  showHeader(body.dashboard.name, body.dashboard.description);
  showAll((body.dashboard.tiles ?? []).map(pending));
  listen();
}

function listen() {
  const events = new EventSource(`/shared/${token}/stream`);
  events.addEventListener('open', () => setStatus('live', 'live'));
  events.addEventListener('error', () => {
    if (events.readyState === EventSource.CLOSED) {
      // Refused (a 503 while the server is busy, say): EventSource gives up, so the page tries again later.
      setStatus('connecting', 'reconnecting');
      setTimeout(reconnect, RECONNECT_MS);
    } else {
      setStatus('connecting', 'reconnecting');
    }
  });
  events.addEventListener('dashboard', (e) => {
    const dashboard = JSON.parse(e.data);
    showHeader(dashboard.name);
    showAll(dashboard.tiles ?? []);
    document.body.dataset.snapshots = String(Number(document.body.dataset.snapshots ?? 0) + 1);
  });
  events.addEventListener('tile', (e) => show(JSON.parse(e.data)));
  events.addEventListener('gone', (e) => {
    events.close();
    end(JSON.parse(e.data).detail ?? 'This dashboard is no longer shared.');
  });
}

/** Listens again, unless the link no longer shares the dashboard. */
async function reconnect() {
  try {
    const response = await fetch(`/shared/${token}`, { headers: { Accept: 'application/json' } });
    if (response.status === 404) {
      end('This dashboard is no longer shared.');
      return;
    }
  } catch (e) {
    // Unreachable for now: the stream's own retries find out when it is back.
  }
  listen();
}

function showHeader(name, description) {
  const title = name || 'Shared dashboard';
  document.getElementById('title').textContent = title;
  document.title = title;
  if (description !== undefined) {
    document.getElementById('description').textContent = description ?? '';
  }
}

/** Draws the tiles in this order; tiles no longer on the dashboard go. */
function showAll(tiles) {
  const ids = new Set(tiles.map((t) => t.tile_id));
  for (const [id, entry] of shown) {
    if (!ids.has(id)) {
      entry.chart?.destroy();
      entry.section.remove();
      shown.delete(id);
    }
  }
  for (const tile of tiles) {
    tilesElement.appendChild(show(tile).section);
  }
}

/** Draws one tile, in place when it is already on the page. */
function show(tile) {
  let entry = shown.get(tile.tile_id);
  if (!entry) {
    entry = create(tile.tile_id);
    shown.set(tile.tile_id, entry);
    tilesElement.appendChild(entry.section);
  }
  const view = describe(tile);
  const data = entry.section.dataset;
  data.name = tile.name ?? '';
  data.kind = tile.kind ?? '';
  data.display = tile.display ?? '';
  data.values = JSON.stringify(view.values);
  data.total = view.total == null ? '' : String(view.total);
  data.lastRefresh = tile.last_refresh ?? '';
  data.updates = String(Number(data.updates ?? -1) + 1);
  entry.title.textContent = tile.name || (tile.kind === 'text' ? '' : 'Untitled insight');
  entry.footer.textContent = tile.last_refresh ? `Calculated ${new Date(tile.last_refresh).toLocaleTimeString()}` : '';
  draw(entry, view);
  return entry;
}

function create(id) {
  const section = document.createElement('section');
  section.className = 'tile';
  section.dataset.tileId = String(id);
  const title = document.createElement('h2');
  const body = document.createElement('div');
  body.className = 'body';
  const footer = document.createElement('footer');
  section.append(title, body, footer);
  return { section, title, body, footer, chart: null };
}

function draw(entry, view) {
  if (view.type === 'line' || view.type === 'bar') {
    const indexAxis = view.horizontal ? 'y' : 'x';
    const stacked = Boolean(view.stacked);
    if (entry.chart && entry.chart.config.type === view.type && entry.chart.options.indexAxis === indexAxis
        && Boolean(entry.chart.options.scales.x.stacked) === stacked) {
      entry.chart.data.labels = view.labels;
      entry.chart.data.datasets = view.datasets;
      entry.chart.update();
      return;
    }
    replace(entry, null);
    const canvas = document.createElement('canvas');
    entry.body.replaceChildren(canvas);
    entry.chart = new Chart(canvas, {
      type: view.type,
      data: { labels: view.labels, datasets: view.datasets },
      options: {
        indexAxis,
        responsive: true,
        maintainAspectRatio: false,
        animation: { duration: 250 },
        plugins: { legend: { display: view.datasets.length > 1 || view.type === 'line' } },
        scales: {
          x: { stacked },
          y: { stacked },
          [view.horizontal ? 'x' : 'y']: { stacked, beginAtZero: true, ticks: { precision: 0 } },
        },
      },
    });
    return;
  }
  if (view.type === 'table') {
    replace(entry, table(view));
    return;
  }
  const element = document.createElement(view.type === 'number' ? 'div' : 'p');
  element.className = { number: 'bold-number', text: 'text-tile', error: 'error' }[view.type] ?? 'note';
  element.textContent = view.type === 'number' ? numberFormat.format(view.number) : view.text;
  replace(entry, element);
}

/** A table view (retention) as an HTML table: a header row, then each row's cells as text. */
function table(view) {
  const element = document.createElement('table');
  element.className = 'table';
  const head = element.createTHead().insertRow();
  for (const header of view.headers) {
    const cell = document.createElement('th');
    cell.textContent = header;
    head.appendChild(cell);
  }
  const body = element.createTBody();
  for (const row of view.rows) {
    const line = body.insertRow();
    for (const value of row) {
      line.insertCell().textContent = value;
    }
  }
  const wrapper = document.createElement('div');
  wrapper.className = 'table-wrapper';
  wrapper.appendChild(element);
  return wrapper;
}

function replace(entry, element) {
  entry.chart?.destroy();
  entry.chart = null;
  if (element) {
    entry.body.replaceChildren(element);
  } else {
    entry.body.replaceChildren();
  }
}

function setStatus(state, text) {
  const status = document.getElementById('status');
  status.dataset.state = state;
  status.textContent = text;
}

function end(message) {
  const element = document.getElementById('message');
  element.textContent = message;
  element.hidden = false;
  setStatus('ended', 'ended');
}

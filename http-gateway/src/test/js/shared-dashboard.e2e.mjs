// The shared dashboard page in a real browser: Debian's Chromium, driven by playwright-core (from this folder's npm
// project, which the build installs before the integration tests). SharedDashboardBrowserIT sets up Eddy (a dashboard
// with a trend, a funnel, stickiness, a lifecycle, retention, paths and a bold number tile, shared) and runs this with:
//   PAGE_URL        the page, http://127.0.0.1:PORT/shared/TOKEN
//   CAPTURE_URL     Eddy's /batch/ endpoint, PROJECT_TOKEN its project API key
//   VIEW_EVENT, SIGNUP_EVENT, PAY_EVENT   the events the tiles count
//   DASHBOARD_NAME  the dashboard's name (it contains markup, which must show as text)
//   EXPECTED        {"views": N, "funnel": [entered, paid]} as captured before the page opens
//   SCREENSHOT      where to keep a picture of the page at the end
// It reads the values each tile exposes (data-values, data-total), captures events, and waits until the page shows
// the exact new values without a reload. Exit 0 when every check holds; otherwise a message and exit 1. The last line
// of its output is a JSON summary (latencies from a capture's 200 to the page showing it).
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { WAIT_MS, setting, withChromium } from './chromium.mjs';

const pageUrl = setting('PAGE_URL');
const captureUrl = setting('CAPTURE_URL');
const projectToken = setting('PROJECT_TOKEN');
const viewEvent = setting('VIEW_EVENT');
const signupEvent = setting('SIGNUP_EVENT');
const payEvent = setting('PAY_EVENT');
const dashboardName = setting('DASHBOARD_NAME');
const expected = JSON.parse(setting('EXPECTED'));
const screenshot = setting('SCREENSHOT');

function check(condition, message) {
  if (!condition) {
    throw new Error(message);
  }
}

function same(actual, wanted, what) {
  check(JSON.stringify(actual) === JSON.stringify(wanted), `${what}: expected ${JSON.stringify(wanted)}, the page shows ${JSON.stringify(actual)}`);
}

async function capture(events) {
  const response = await fetch(captureUrl, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ api_key: projectToken, batch: events }),
  });
  check(response.status === 200, `capture answered ${response.status}: ${await response.text()}`);
}

function views(n) {
  return Array.from({ length: n }, () => ({ event: viewEvent, properties: { distinct_id: `viewer-${crypto.randomUUID()}` } }));
}

/** A person entering the funnel, and paying a second later when {@code pays}. */
function funnelPerson(pays) {
  const person = `buyer-${crypto.randomUUID()}`;
  const now = Date.now();
  const events = [{ event: signupEvent, timestamp: new Date(now - 2000).toISOString(), properties: { distinct_id: person } }];
  if (pays) {
    events.push({ event: payEvent, timestamp: new Date(now - 1000).toISOString(), properties: { distinct_id: person } });
  }
  return events;
}

async function tiles(page) {
  return page.$$eval('section.tile', (sections) => sections.map((s) => ({
    name: s.dataset.name,
    kind: s.dataset.kind,
    display: s.dataset.display,
    values: JSON.parse(s.dataset.values || 'null'),
    total: s.dataset.total === '' ? null : Number(s.dataset.total),
    canvas: s.querySelector('canvas') !== null,
    table: s.querySelector('table') !== null,
    number: s.querySelector('.bold-number')?.textContent ?? null,
  })));
}

function byName(all, name) {
  const tile = all.find((t) => t.name === name);
  check(tile, `no tile named ${name}; tiles: ${JSON.stringify(all)}`);
  return tile;
}

/** Waits until the page shows {views, funnel}; answers how long after {@code since} it did. */
async function shows(page, wanted, since) {
  try {
    await page.waitForFunction((w) => {
      const tile = (name) => document.querySelector(`section.tile[data-name="${name}"]`);
      const views = tile('Views');
      const total = tile('Total views');
      const funnel = tile('Signup funnel');
      return views && total && funnel && Number(views.dataset.total) === w.views && Number(total.dataset.total) === w.views
        && funnel.dataset.values === JSON.stringify(w.funnel);
    }, wanted, { polling: 'raf', timeout: WAIT_MS });
  } catch (e) {
    throw new Error(`the page did not show ${JSON.stringify(wanted)} within ${WAIT_MS} ms; it shows ${JSON.stringify(await tiles(page))}`);
  }
  return Math.round(performance.now() - since);
}

async function main() {
  await withChromium({ viewport: { width: 1280, height: 900 } }, async (context) => {
    const page = context.pages()[0] ?? await context.newPage();
    const problems = [];
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') {
        problems.push(`console error: ${m.text()}`);
      }
    });
    page.on('response', (r) => {
      if (r.status() >= 400) {
        problems.push(`${r.status()} for ${r.url()}`);
      }
    });
    let navigations = 0;
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) {
        navigations++;
      }
    });

    const response = await page.goto(pageUrl);
    check(response.status() === 200, `the page answered ${response.status()}`);
    check((response.headers()['content-type'] ?? '').startsWith('text/html'), `the page is ${response.headers()['content-type']}`);
    await page.waitForFunction(() => Number(document.body.dataset.snapshots ?? 0) >= 1, null, { timeout: WAIT_MS });

    // Text from the data is text: the dashboard's name, markup and all, shows as written.
    const title = await page.$eval('h1', (h) => ({ text: h.textContent, children: h.children.length }));
    same(title, { text: dashboardName, children: 0 }, 'the title');
    check(await page.title() === dashboardName, `the document title is ${await page.title()}`);
    check(await page.evaluate(() => document.body.dataset.xss === undefined), 'markup from the dashboard\'s name ran');

    const first = await tiles(page);
    const trend = byName(first, 'Views');
    same([trend.kind, trend.display, trend.total, trend.canvas], ['trend', 'ActionsLineGraph', expected.views, true], 'the trend tile');
    check(trend.values.length === 1 && trend.values[0].length === 8 && trend.values[0].reduce((a, b) => a + b, 0) === expected.views,
      `the trend's series: ${JSON.stringify(trend.values)}`);
    const bold = byName(first, 'Total views');
    same([bold.kind, bold.display, bold.total, bold.number, bold.canvas], ['trend', 'BoldNumber', expected.views, String(expected.views), false],
      'the bold number tile');
    const funnel = byName(first, 'Signup funnel');
    same([funnel.kind, funnel.values, funnel.canvas], ['funnel', expected.funnel, true], 'the funnel tile');
    // Every viewer came once, today: on one day of eight (stickiness), and new today (the lifecycle's last interval).
    const sticky = byName(first, 'Stickiness');
    same([sticky.kind, sticky.total, sticky.canvas, sticky.values], ['stickiness', expected.views, true, [[expected.views, 0, 0, 0, 0, 0, 0, 0]]],
      'the stickiness tile');
    const lifecycle = byName(first, 'Lifecycle');
    same([lifecycle.kind, lifecycle.total, lifecycle.canvas, lifecycle.values.length], ['lifecycle', expected.views, true, 4], 'the lifecycle tile');
    same(lifecycle.values[0].slice(-1), [expected.views], 'the persons new today');
    // Seven daily cohorts, the last one today's: every viewer, with no period after it yet.
    const retention = byName(first, 'Retention');
    same([retention.kind, retention.canvas, retention.table, retention.values.length, retention.values[6]],
      ['retention', false, true, 7, [expected.views]], 'the retention tile');
    // One flow, sign-up to payment, taken by each buyer who paid.
    const flows = byName(first, 'Paths');
    same([flows.kind, flows.table, flows.values], ['paths', true, [expected.funnel[1]]], 'the paths tile');

    await page.evaluate(() => { window.eddyTestMarker = 'the same page'; });
    const now = { views: expected.views, funnel: [...expected.funnel] };
    const latencies = [];
    const rounds = [
      () => { now.views += 2; return views(2); },
      () => { now.views += 1; return views(1); },
      () => { now.funnel[0] += 1; now.funnel[1] += 1; return funnelPerson(true); },
      () => { now.funnel[0] += 1; return funnelPerson(false); },
      () => { now.views += 3; return views(3); },
    ];
    for (const round of rounds) {
      // Captures land anywhere within the poller's interval, not just after the tick that showed the last one.
      await page.waitForTimeout(Math.floor(Math.random() * 1000));
      const events = round();
      await capture(events);
      const captured = performance.now();
      latencies.push(await shows(page, now, captured));
    }

    same(await page.evaluate(() => window.eddyTestMarker), 'the same page', 'the page after the updates (a reload would lose the marker)');
    check(navigations === 1, `the page navigated ${navigations} times`);
    check(await page.evaluate(() => performance.getEntriesByType('navigation').length) === 1, 'a second navigation');
    const status = await page.$eval('#status', (s) => s.dataset.state);
    check(status === 'live', `the status shows ${status}`);
    check(problems.length === 0, `the browser reported: ${problems.join('; ')}`);

    // Let the last chart animation finish before the picture.
    await page.waitForTimeout(600);
    mkdirSync(path.dirname(screenshot), { recursive: true });
    await page.screenshot({ path: screenshot, fullPage: true });
    console.log(`shared dashboard page checked: ${rounds.length} live updates, no reload; screenshot ${screenshot}`);
    console.log(JSON.stringify({ latencies_ms: latencies, final: now }));
  });
}

main().catch((e) => {
  console.error(`FAILED: ${e.message}`);
  process.exit(1);
});

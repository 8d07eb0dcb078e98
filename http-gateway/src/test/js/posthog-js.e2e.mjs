// posthog-js as a website runs it, against Eddy: a page on another origin (a server of this script's own, on another
// port) loads posthog-js from npm (bundled with esbuild, default settings; only the bot filter is off, as posthog-js
// advises for tests, since HeadlessChrome is on its list of bots) in Debian's Chromium, driven by playwright-core.
// PostHogJsBrowserIT starts Eddy and runs this with:
//   EDDY_URL       api_host, http://127.0.0.1:PORT
//   PROJECT_TOKEN  the project API key
//   FLAG_KEY       a flag rolled out to everybody
//   RUN            a suffix for this run's event names
//   USER           the distinct id the page identifies as
// The page loads (its $pageview, remote config, flags), captures two events into posthog-js's request queue and waits
// for the queue's own flush, identifies, joins a group, captures three more events and leaves at once by a link (an
// $autocapture click), so those and $pageleave go out with sendBeacon. Every request the page makes to Eddy is
// recorded with the events it carried, and every sendBeacon call with its URL. The last line of the output is a JSON
// summary; the test checks what Eddy stored against it. Exit 1 on a failure seen in the browser (a failed request, a
// 4xx or 5xx from Eddy, an error in the console). Last, a page loads posthog-js as PostHog's HTML snippet does, from
// Eddy's /static/array.js, and sends one event.
import { createRequire } from 'node:module';
import { createServer } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { WAIT_MS, setting, withChromium } from './chromium.mjs';

const require = createRequire(import.meta.url);
const esbuild = require('esbuild');

const eddyUrl = setting('EDDY_URL');
const token = setting('PROJECT_TOKEN');
const flagKey = setting('FLAG_KEY');
const run = setting('RUN');
const user = setting('USER');
const before = `js before ${run}`;
const after = `js after ${run}`;

/** posthog-js from npm as a site bundles it. */
async function bundle() {
  const built = await esbuild.build({
    stdin: { contents: "import posthog from 'posthog-js'; window.posthog = posthog;", resolveDir: import.meta.dirname },
    bundle: true, format: 'iife', platform: 'browser', target: 'es2020', write: false, logLevel: 'silent',
  });
  return built.outputFiles[0].text;
}

/**
 * The site: its page with posthog-js from npm, a page without it to leave to, and a page that loads posthog-js as
 * PostHog's HTML snippet does, from api_host's /static/array.js (Eddy serves it).
 */
function site(script) {
  const scriptTag = `<!doctype html><html><head><title>Eddy e2e, script tag</title>
    <script src="${eddyUrl}/static/array.js"></script><script>
    posthog.init(${JSON.stringify(token)}, { api_host: ${JSON.stringify(eddyUrl)}, opt_out_useragent_filter: true,
      persistence: 'memory', capture_pageview: false, capture_pageleave: false, autocapture: false });
  </script></head><body><p>posthog-js from Eddy's /static/array.js</p></body></html>`;
  const page = `<!doctype html><html><head><title>Eddy e2e</title><script src="/posthog.js"></script><script>
    posthog.init(${JSON.stringify(token)}, { api_host: ${JSON.stringify(eddyUrl)}, opt_out_useragent_filter: true });
  </script></head><body><h1>A site that uses posthog-js</h1><a id="leave" href="/bye">leave</a></body></html>`;
  const server = createServer((req, res) => {
    if (req.url === '/posthog.js') {
      res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(script);
    } else if (req.url === '/') {
      res.writeHead(200, { 'Content-Type': 'text/html' }).end(page);
    } else if (req.url === '/favicon.ico') {
      res.writeHead(204).end();
    } else if (req.url === '/script-tag') {
      res.writeHead(200, { 'Content-Type': 'text/html' }).end(scriptTag);
    } else if (req.url === '/bye') {
      res.writeHead(200, { 'Content-Type': 'text/html' }).end('<!doctype html><title>bye</title><p>bye</p>');
    } else {
      res.writeHead(404).end();
    }
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** The events a capture or flags request carried, decoded as Eddy must: gzip, base64 form data, or JSON. */
function carried(request) {
  const body = request.postDataBuffer();
  if (!body || body.length === 0) {
    return { encoding: 'none', payload: null };
  }
  const url = new URL(request.url());
  let encoding = 'json';
  let text;
  if (body[0] === 0x1f && body[1] === 0x8b) {
    encoding = 'gzip';
    text = gunzipSync(body).toString('utf8');
  } else if (body.subarray(0, 5).toString() === 'data=') {
    encoding = `form-${url.searchParams.get('compression') ?? 'plain'}`;
    const data = new URLSearchParams(body.toString('latin1')).get('data');
    text = encoding === 'form-base64' ? Buffer.from(data, 'base64').toString('utf8') : data;
  } else {
    text = body.toString('utf8');
  }
  return { encoding, payload: JSON.parse(text) };
}

function eventNames(payload) {
  const events = Array.isArray(payload) ? payload : Array.isArray(payload?.batch) ? payload.batch : payload?.event ? [payload] : [];
  return events.map((e) => e.event);
}

async function main() {
  const script = await bundle();
  const server = await site(script);
  const siteUrl = `http://127.0.0.1:${server.address().port}`;
  const requests = [];
  // Each request to Eddy's entry, to mark it settled when it fails.
  const sent = new Map();
  const failures = [];
  const consoleErrors = [];
  await withChromium({}, async (browser) => {
    const page = browser.pages()[0] ?? await browser.newPage();
    // Chromium does not report a beacon sent while its page unloads, so the site's page notes each call where the next
    // page of the site can read it: what Eddy received of them, the test reads from Eddy.
    await page.addInitScript(() => {
      const send = navigator.sendBeacon.bind(navigator);
      navigator.sendBeacon = (url, data) => {
        const queued = send(url, data);
        const seen = JSON.parse(localStorage.getItem('eddy-beacons') ?? '[]');
        seen.push({ url: String(url), type: data?.type ?? null, bytes: data?.size ?? null, queued });
        localStorage.setItem('eddy-beacons', JSON.stringify(seen));
        return queued;
      };
    });
    page.on('console', (message) => {
      if (message.type() === 'error') {
        consoleErrors.push(message.text());
      }
    });
    browser.on('request', (request) => {
      if (!request.url().startsWith(eddyUrl)) {
        return;
      }
      const url = new URL(request.url());
      const entry = { method: request.method(), path: url.pathname, query: url.search, type: request.resourceType(),
        contentType: request.headers()['content-type'] ?? null, status: null };
      try {
        const { encoding, payload } = carried(request);
        entry.encoding = encoding;
        entry.events = eventNames(payload);
      } catch (e) {
        entry.decodeError = String(e);
      }
      requests.push(entry);
      sent.set(request, entry);
      request.response().then((response) => {
        entry.status = response?.status() ?? null;
        entry.settled = true;
        if (response && response.status() >= 400) {
          failures.push(`${entry.method} ${entry.path}${entry.query} answered ${response.status()}`);
        }
      }).catch(() => {
        entry.settled = true;
      });
    });
    browser.on('requestfailed', (request) => {
      const entry = sent.get(request);
      if (entry) {
        entry.settled = true;
      }
      // A beacon's page is gone before its answer: Chromium reports it cancelled, not failed.
      if (request.url().startsWith(eddyUrl) && !(request.resourceType() === 'ping' && request.failure()?.errorText === 'net::ERR_ABORTED')) {
        failures.push(`${request.method()} ${request.url()} failed: ${request.failure()?.errorText}`);
      }
    });

    await page.goto(`${siteUrl}/`);
    const flags = await page.evaluate(({ key, wait }) => new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no feature flags within the wait')), wait);
      window.posthog.onFeatureFlags((keys, variants, context) => {
        clearTimeout(timer);
        resolve({ keys, enabled: window.posthog.isFeatureEnabled(key), errorsLoading: context?.errorsLoading ?? null });
      });
    }), { key: flagKey, wait: WAIT_MS });
    const anonymousId = await page.evaluate(() => window.posthog.get_distinct_id());

    // Two events through the request queue, flushed by its own timer.
    const queued = requests.length;
    await page.evaluate((name) => {
      window.posthog.capture(name, { step: 1 });
      window.posthog.capture(name, { step: 2 });
    }, before);
    await waitFor(() => requests.slice(queued).some((r) => r.events?.includes(before) && r.status !== null), 'the queue to flush');

    await page.evaluate(({ id }) => {
      window.posthog.identify(id, { email: `${id}@example.com`, plan: 'pro' }, { first_plan: 'pro' });
      window.posthog.group('company', `acme-${id}`, { name: 'Acme', seats: 12 });
    }, { id: user });
    await waitFor(() => requests.some((r) => r.events?.includes('$groupidentify') && r.status !== null), '$groupidentify to be answered');

    // Three more into the queue, then leave at once: the queue goes out with sendBeacon on unload.
        await page.evaluate((name) => {
      for (let i = 0; i < 3; i++) {
        window.posthog.capture(name, { step: 3 + i });
      }
    }, after);
    await page.click('#leave');
    await page.waitForURL(`${siteUrl}/bye`);
    const beacons = await page.evaluate(() => JSON.parse(localStorage.getItem('eddy-beacons') ?? '[]'));
    // Let the beacons reach Eddy before the browser closes.
    await new Promise((resolve) => setTimeout(resolve, 1000));

    // posthog-js as the snippet loads it: Eddy's /static/array.js in a script tag, then one event sent at once.
    await page.goto(`${siteUrl}/script-tag`);
    await page.evaluate((name) => window.posthog.capture(name, { loaded_from: 'static/array.js' }, { send_instantly: true }),
      `js script-tag ${run}`);
    await waitFor(() => requests.some((r) => r.events?.includes(`js script-tag ${run}`) && r.status !== null), 'the script-tag page\'s event');
    // Requests the page started on its own (its flags, its config) may still be on their way: each is reported answered
    // or failed, never as caught in flight.
    await waitFor(() => requests.every((r) => r.settled), 'every request to Eddy to be answered or to fail');

    const summary = { anonymousId, flags, beacons, requests, failures, consoleErrors };
    console.log(JSON.stringify(summary));
    if (failures.length || summary.consoleErrors.length) {
      process.exitCode = 1;
    }
  }).catch((e) => {
    console.log(JSON.stringify({ error: String(e), requests, failures, consoleErrors }));
    throw e;
  }).finally(() => server.close());
}

async function waitFor(condition, what) {
  const deadline = Date.now() + WAIT_MS;
  while (!condition()) {
    if (Date.now() > deadline) {
      throw new Error(`waited ${WAIT_MS} ms for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

main().catch((e) => {
  console.error(e.stack ?? String(e));
  process.exit(1);
});

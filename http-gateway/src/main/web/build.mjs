// Bundles the shared dashboard page into the gateway's webroot (Maven's generate-resources runs it with
// target/classes/webroot as the argument): the script and style under static/ with content hashes in their names
// (served with a year's cache), and shared-dashboard.html naming them (served with no-cache). Nothing is fetched
// from elsewhere at run time.
import * as esbuild from 'esbuild';
import { copyFile, readFile, readdir, rm, writeFile, mkdir } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import path from 'node:path';

const out = path.resolve(process.argv[2] ?? '../../../target/classes/webroot');
const assets = path.join(out, 'static');
await rm(assets, { recursive: true, force: true });
await mkdir(assets, { recursive: true });

const result = await esbuild.build({
  entryPoints: ['src/shared-dashboard.js'],
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2020'],
  outdir: assets,
  entryNames: '[name]-[hash]',
  metafile: true,
  logLevel: 'warning',
});

const built = Object.keys(result.metafile.outputs).map((file) => path.basename(file));
const script = built.find((f) => f.endsWith('.js'));
const style = built.find((f) => f.endsWith('.css'));
if (!script || !style) {
  throw new Error(`expected a script and a style, built ${built.join(', ')}`);
}
const template = await readFile('src/shared-dashboard.html', 'utf8');
await writeFile(path.join(out, 'shared-dashboard.html'), template.replaceAll('%SCRIPT%', script).replaceAll('%STYLE%', style));

for (const file of [script, style]) {
  const bytes = await readFile(path.join(assets, file));
  console.log(`[web] ${file}: ${bytes.length} bytes, ${gzipSync(bytes).length} gzipped`);
}

// posthog-js's browser bundles, as PostHog's asset host serves them: the snippet loads array.js, and posthog-js loads
// its extensions (surveys.js, ...) from api_host when its remote config asks it to. Only the files a browser loads:
// every dist/*.js but the npm entry points (module*, main*), which bundlers import and browsers never fetch.
const posthogJs = path.join(out, 'posthog-js');
await rm(posthogJs, { recursive: true, force: true });
await mkdir(posthogJs, { recursive: true });
const dist = path.resolve('node_modules/posthog-js/dist');
const bundles = (await readdir(dist)).filter((f) => f.endsWith('.js') && !/^(module|main)[.]/.test(f)).sort();
for (const file of bundles) {
  await copyFile(path.join(dist, file), path.join(posthogJs, file));
}
const { version } = JSON.parse(await readFile('node_modules/posthog-js/package.json', 'utf8'));
await writeFile(path.join(posthogJs, 'bundles.json'), JSON.stringify({ version, files: bundles }, null, 2));
console.log(`[web] posthog-js ${version}: ${bundles.length} browser bundles`);

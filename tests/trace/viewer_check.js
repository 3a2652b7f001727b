#!/usr/bin/env node
// Opens a Chrome/Perfetto trace-event JSON file in a real trace reader,
// speedscope (npm), in headless Chromium driven by playwright-core, and
// reports what the reader said.
//
// Usage: node viewer_check.js VIEWER_DIR TRACE.json [NAME...]
//   VIEWER_DIR  tools/trace/viewer, where scripts/setup_viewer.sh installed
//               speedscope and playwright-core (node_modules)
//   NAME        frame names that must appear in speedscope's sandwich view
//               (its table of every frame of rank 0's main thread, searched)
//
// Serves speedscope's release files and the trace from a local HTTP server
// on 127.0.0.1, loads index.html#profileURL=<trace> in a fresh Chromium
// profile, collects every console message and page error, waits for the
// import to finish, opens the sandwich view and reads its frame names.
// Prints one JSON line: {"loaded", "errors": [...], "warnings": [...],
// "nesting_errors", "profiles", "frames_found", "frames_missing"}.
// Exit 0 when the profile loaded with no error, no nesting warning
// ("Tried to end ...", "... was still open ...") and every NAME found;
// 1 otherwise; 77 when the viewer or Chromium is not installed.
'use strict';
const fs = require('fs');
const http = require('http');
const os = require('os');
const path = require('path');

const [viewerDir, tracePath, ...names] = process.argv.slice(2);
if (!viewerDir || !tracePath) {
  console.error('usage: viewer_check.js VIEWER_DIR TRACE.json [NAME...]');
  process.exit(2);
}
const CHROMIUM = process.env.BALLAST_CHROMIUM || '/usr/bin/chromium';
const release = path.join(viewerDir, 'node_modules', 'speedscope', 'dist', 'release');
let chromium;
try {
  ({chromium} = require(path.join(path.resolve(viewerDir), 'node_modules', 'playwright-core')));
} catch (e) {
  console.log('SKIP: playwright-core is not installed in ' + viewerDir +
              ' (scripts/setup_viewer.sh): ' + e.message);
  process.exit(77);
}
if (!fs.existsSync(path.join(release, 'index.html'))) {
  console.log('SKIP: speedscope is not installed in ' + viewerDir + ' (scripts/setup_viewer.sh)');
  process.exit(77);
}
if (!fs.existsSync(CHROMIUM)) {
  console.log('SKIP: no Chromium at ' + CHROMIUM + ' (scripts/setup.sh installs it)');
  process.exit(77);
}

const TYPES = {'.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css',
               '.json': 'application/json', '.wasm': 'application/wasm',
               '.png': 'image/png', '.woff2': 'font/woff2', '.ico': 'image/x-icon'};

function serve() {
  const server = http.createServer((req, res) => {
    const url = decodeURIComponent(req.url.split('?')[0].split('#')[0]);
    const file = url === '/trace.json' ? tracePath
                                       : path.join(release, path.normalize(url).replace(/^\/+/, ''));
    fs.readFile(file, (err, data) => {
      if (err) {
        res.writeHead(404);
        res.end();
        return;
      }
      res.writeHead(200, {'Content-Type': TYPES[path.extname(file)] || 'application/octet-stream'});
      res.end(data);
    });
  });
  return new Promise(resolve => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function main() {
  const server = await serve();
  const base = 'http://127.0.0.1:' + server.address().port;
  const profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ballast-viewer-'));
  const out = {loaded: false, errors: [], warnings: [], nesting_errors: 0, profiles: '',
               frames_found: [], frames_missing: []};
  let browser;
  try {
    browser = await chromium.launchPersistentContext(profileDir, {
      executablePath: CHROMIUM, headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
             '--disable-component-update', '--disable-sync']});
    const page = browser.pages()[0] || await browser.newPage();
    page.on('console', m => {
      const t = m.type(), text = m.text();
      if (/Tried to end|was still open|stack was empty/.test(text)) out.nesting_errors++;
      if (t === 'error') out.errors.push(text);
      else if (t === 'warning') out.warnings.push(text);
    });
    page.on('pageerror', e => out.errors.push('page error: ' + e.message));
    await page.goto(base + '/index.html#profileURL=' + encodeURIComponent(base + '/trace.json'));
    // Imported: the toolbar names the profile, with "n/m" when there are several.
    await page.waitForFunction(() => /\d+\/\d+|rank|pid/.test(document.body.innerText),
                               null, {timeout: 60000});
    out.loaded = true;
    out.profiles = (await page.evaluate(() => document.body.innerText))
        .split('\n').filter(l => /\d+\/\d+|rank/.test(l)).slice(0, 3).join(' | ');
    if (names.length) {
      // The sandwich view lists every frame of the profile shown (rank 0's
      // main thread) in an HTML table.
      const clicked = await page.evaluate(() => {
        const d = [...document.querySelectorAll('div')].find(
            e => e.children.length <= 1 && /Sandwich$/.test(e.textContent));
        if (d) d.click();
        return !!d;
      });
      if (!clicked) out.errors.push('driver: no Sandwich tab');
      await page.waitForTimeout(500);
      // The table shows the rows in view only: search it (Ctrl+F opens
      // speedscope's search box, which filters the table) for each name.
      await page.keyboard.press('Control+f');
      const search = page.locator('input:not([placeholder])').first();
      for (const n of names) {
        await search.fill(n);
        await page.waitForTimeout(300);
        const text = await page.evaluate(() => document.body.innerText);
        const rows = text.split('\n').filter(l => l.startsWith('\t') && l.includes(n));
        (rows.length ? out.frames_found : out.frames_missing).push(n);
      }
    }
  } catch (e) {
    out.errors.push('driver: ' + e.message.split('\n')[0]);
  } finally {
    if (browser) await browser.close();
    server.close();
    fs.rmSync(profileDir, {recursive: true, force: true});
  }
  out.warnings = out.warnings.slice(0, 20);
  out.errors = out.errors.slice(0, 20);
  console.log(JSON.stringify(out));
  const ok = out.loaded && out.errors.length === 0 && out.nesting_errors === 0 &&
             out.frames_missing.length === 0;
  process.exit(ok ? 0 : 1);
}

main();

// browser.mjs: what the browser drivers share: Debian's chromium launched headless through
// playwright-core, and pages that record console errors, page errors and CSP violations in
// `problems` (the drivers report them); and a driver's start (driver()).
import { chromium } from 'playwright-core';
import { readFileSync, mkdirSync } from 'node:fs';

export async function launch(cfg) {
  const problems = [];
  const browser = await chromium.launch({
    executablePath: cfg.chromium || '/usr/bin/chromium',
    args: ['--no-sandbox', '--ignore-certificate-errors', '--disable-gpu'],
  });
  async function newPage(width = 1280, height = 800) {
    const context = await browser.newContext({ viewport: { width, height }, ignoreHTTPSErrors: true });
    const page = await context.newPage();
    await page.addInitScript(() => {
      window.__csp = [];
      document.addEventListener('securitypolicyviolation', e => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
    });
    page.on('console', msg => { if (msg.type() === 'error') problems.push(`console: ${msg.text()}`); });
    page.on('pageerror', err => problems.push(`pageerror: ${err.message}`));
    return page;
  }
  return { browser, newPage, problems };
}

/** A driver's start: its configuration (the JSON file argv[2] names; cfg.out made), report()
 *  (one JSON line {name, value}: the Perl test decides), the browser, and the admin pages'
 *  settle (main loaded; with busy, no table still asking the API), signIn(page, token) and
 *  visit(page, hash). */
export async function driver({ busy = true } = {}) {
  const cfg = JSON.parse(readFileSync(process.argv[2], 'utf8'));
  mkdirSync(cfg.out, { recursive: true });
  const report = (name, value) => console.log(JSON.stringify({ name, value }));
  const { browser, newPage, problems } = await launch(cfg);
  const settle = page => page.waitForFunction(b => !document.querySelector('main .loading') &&
    !(b && document.querySelector('main [aria-busy="true"]')), busy, { timeout: 15000 });
  async function signIn(page, token) {
    await page.goto(`${cfg.url}/admin/`);
    await page.waitForSelector('#token');
    await page.fill('#token', token);
    await page.click('form.signin button[type=submit]');
    await page.waitForFunction(() => location.hash.startsWith('#/orgs') || location.hash.startsWith('#/o/'));
    await settle(page);
  }
  async function visit(page, hash) { await page.goto(`${cfg.url}/admin/#${hash}`); await settle(page); }
  return { cfg, report, browser, newPage, problems, o: encodeURIComponent(cfg.org || ''), settle, signIn, visit };
}

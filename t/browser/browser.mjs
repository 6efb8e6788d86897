// browser.mjs: what the browser drivers share: Debian's chromium launched headless through
// playwright-core, and pages that record console errors, page errors and CSP violations in
// `problems` (the drivers report them).
import { chromium } from 'playwright-core';

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

// axe.mjs: runs axe-core (npm, pinned in package-lock.json) over admin pages in Debian's
// chromium for t/7006-admin-axe.t, at 1280 px and at 390 px, and reports each page's serious
// and critical violations ({id, impact, nodes: [selectors]}) and any text squeezed letter by
// letter, one JSON line per page and width.
// axe is evaluated in the page through the DevTools protocol, so the pages' strict CSP stays on.
// Usage: node axe.mjs CONFIG.json (url, org, admin, out, pages: [[name, hash], ...])
import { driver } from './browser.mjs';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const { cfg, report, browser, newPage, problems, settle } = await driver();
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

// Text squeezed into a column too narrow for its words (wrapped letter by letter): the cells,
// list items, links and labels whose text takes more lines than it has words, and whether the
// page scrolls sideways.
const narrow = page => page.evaluate(() => ({
  cells: [...document.querySelectorAll('main td, main th, main li, main a, main label')].filter(el => {
    if (!el.offsetParent || el.textContent.trim().length < 3) return false;
    const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    let words = 0;
    const lines = new Set();
    for (let t = walk.nextNode(); t; t = walk.nextNode()) {
      const range = document.createRange();
      range.selectNodeContents(t);
      const rects = [...range.getClientRects()].filter(r => r.width > 0);
      if (!rects.length) continue;
      words += t.textContent.trim().split(/\s+/).filter(Boolean).length;
      for (const r of rects) lines.add(Math.round(r.bottom));
    }
    return words > 0 && lines.size > words;
  }).map(el => `${el.tagName.toLowerCase()}: ${el.textContent.trim().slice(0, 20)}`).slice(0, 5),
  overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
}));

try {
  for (const [width, height] of [[1280, 800], [390, 844]]) {
    const page = await newPage(width, height);
    await page.goto(`${cfg.url}/admin/`);
    await page.waitForSelector('#token');
    const signin = await check(page);
    report(`axe ${width} signin`, signin);
    await page.fill('#token', cfg.admin);
    await page.click('form.signin button[type=submit]');
    await page.waitForFunction(() => location.hash.startsWith('#/orgs'));
    await settle(page);
    for (const [name, hash] of cfg.pages) {
      await page.goto(`${cfg.url}/admin/#${hash}`);
      await settle(page);
      if (name === 'group') await page.click('main details.diff summary').catch(() => null);
      report(`axe ${width} ${name}`, { ...await check(page), narrow: await narrow(page) });
    }
    await page.context().close();
  }
  report('problems', problems.splice(0));
} catch (err) {
  report('driver error', String(err && err.stack || err));
} finally {
  await browser.close();
}

async function check(page) {
  if (!await page.evaluate(() => !!window.axe)) await page.evaluate(axeSource);
  const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  return {
    checked: result.passes.length + result.violations.length,
    violations: result.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')
      .map(v => ({ id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 5).map(n => n.target.join(' ')) })),
    minor: result.violations.filter(v => v.impact !== 'serious' && v.impact !== 'critical').map(v => `${v.id} (${v.impact})`),
  };
}

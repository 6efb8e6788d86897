// reference.mjs: drives Debian's chromium (headless, through playwright-core) over the API
// reference page (/docs/) of a running stack and reports what it saw, one JSON line per
// observation: {"name": "...", "value": ...}. It decides nothing: t/7003-reference-page.t holds
// the expectations (it reads GET /docs itself).
// Usage: node reference.mjs CONFIG.json   (url, out: screenshot folder, anchor: an operationId
// to follow from the contents, search: what to type in the search box)
import { launch } from './browser.mjs';
import { readFileSync, mkdirSync } from 'node:fs';

const cfg = JSON.parse(readFileSync(process.argv[2], 'utf8'));
mkdirSync(cfg.out, { recursive: true });
const report = (name, value) => console.log(JSON.stringify({ name, value }));
const xss = '<img src=x onerror="window.__xss=1"><b>bold</b>';

const { browser, newPage, problems } = await launch(cfg);

async function open(page, hash = '') {
  await page.goto(`${cfg.url}/docs/${hash}`);
  await page.waitForFunction(() => !document.querySelector('main .loading'), null, { timeout: 15000 });
}

const visibleOps = page => page.evaluate(() => [...document.querySelectorAll('section.op')].filter(s => s.offsetParent !== null).map(s => s.id));
const cspSeen = async page => { for (const v of await page.evaluate(() => window.__csp)) problems.push(`csp: ${v}`); };

// where the section of an operation is: the address, its top in the viewport, :target
const placeOf = (page, id) => page.evaluate(id => {
  const el = document.getElementById(id);
  return { hash: location.hash, top: el ? Math.round(el.getBoundingClientRect().top) : null,
    target: el ? el.matches(':target') : false, scrolled: Math.round(scrollY) };
}, id);

try {
  // ---- the whole reference ----
  let page = await newPage();
  await open(page);
  report('error shown', await page.evaluate(() => (document.querySelector('main .error') || {}).textContent || ''));
  report('operations', await page.evaluate(() => [...document.querySelectorAll('section.op')].map(s => s.id)));
  report('areas', await page.evaluate(() => [...document.querySelectorAll('section.area > h2')].map(e => e.textContent)));
  report('contents links', await page.evaluate(() => [...document.querySelectorAll('.toc li li a')].map(a => a.getAttribute('href').slice(1))));
  report('an operation', await page.evaluate(id => {
    const s = document.getElementById(id);
    return s && { method: s.querySelector('.method').textContent, path: s.querySelector('.path').textContent,
      text: s.textContent, curl: s.querySelector('pre.curl').textContent,
      parameters: [...s.querySelectorAll('ul.parameters > li')].map(li => [li.querySelector('.name').textContent,
        li.querySelector('.in').textContent, !!li.querySelector('.required')]),
      fields: [...s.querySelectorAll('ul.schema > li > code.name')].map(e => e.textContent) };
  }, cfg.anchor));
  await page.screenshot({ path: `${cfg.out}/reference.png` });

  // ---- the search ----
  await page.fill('#search', cfg.search);
  report('search shows', await visibleOps(page));
  report('search count', await page.textContent('.search .count'));
  await page.screenshot({ path: `${cfg.out}/search.png` });
  await page.fill('#search', '');
  report('search cleared shows', (await visibleOps(page)).length);

  // ---- anchors: a link of the contents, and an address opened with one ----
  await page.click(`.toc a[href="#${cfg.anchor}"]`);
  await page.waitForFunction(id => location.hash === `#${id}`, cfg.anchor);
  report('anchor followed', await placeOf(page, cfg.anchor));
  await page.screenshot({ path: `${cfg.out}/anchor.png` });
  await cspSeen(page);
  const fresh = await newPage();
  await open(fresh, `#${cfg.anchor}`);
  await fresh.waitForTimeout(300);
  report('anchor opened', await placeOf(fresh, cfg.anchor));
  await cspSeen(fresh);
  report('problems', problems.splice(0));

  // ---- what the document says stays text: a summary and a schema description with HTML ----
  const hostile = await newPage();
  await hostile.route(`${cfg.url}/docs`, async route => {
    const res = await route.fetch();
    const doc = await res.json();
    const first = Object.values(Object.values(doc.paths)[0])[0];
    first.summary = xss;
    for (const s of Object.values(doc.components.schemas)) s.description = xss;
    await route.fulfill({ response: res, json: doc });
  });
  await open(hostile);
  report('hostile document', await hostile.evaluate(x => ({ xss: window.__xss || 0, imgs: document.querySelectorAll('main img, main b').length,
    as_text: [...document.querySelectorAll('main .summary, main .note')].filter(e => e.textContent.includes(x)).length }), xss));
  await cspSeen(hostile);
  report('hostile problems', problems.splice(0));

  // ---- a phone: nothing scrolls sideways, the contents and every folded answer open ----
  const phone = await newPage(390, 844);
  await open(phone);
  const overflow = () => phone.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  const measured = { top: await overflow() };
  await phone.screenshot({ path: `${cfg.out}/phone.png` });
  await phone.evaluate(() => document.querySelectorAll('details').forEach(d => { d.open = true; }));
  measured['everything open'] = await overflow();
  await phone.click(`.toc a[href="#${cfg.anchor}"]`);
  measured['at the anchor'] = await overflow();
  await phone.screenshot({ path: `${cfg.out}/phone-anchor.png` });
  // the widest element, when one is wider than the screen (to say which)
  report('phone widest', await phone.evaluate(() => {
    const w = document.documentElement.clientWidth;
    const over = [...document.querySelectorAll('main *')].find(e => e.getBoundingClientRect().right > w + 1 && !e.closest('.table-wrap'));
    return over ? `${over.tagName}.${over.className}: ${over.textContent.slice(0, 80)}` : '';
  }));
  report('phone overflow', measured);
  await cspSeen(phone);
  report('phone problems', problems.splice(0));
} catch (err) {
  report('driver error', String(err && err.stack || err));
}
await browser.close();

-- links.lua: a link to another page of the manual (page.md, page.md#part) becomes a link to its
-- HTML (page.html), so the sources read on their own and the built pages link each other.
function Link(el)
  if not el.target:match('^%a[%w+.-]*:') and not el.target:match('^/') then
    el.target = el.target:gsub('%.md$', '.html'):gsub('%.md#', '.html#')
  end
  return el
end

-- the admin pages' screenshots, which the browser tests take (t/browser/screenshots/), are
-- copied beside the pages by tools/manual
function Image(el)
  el.src = el.src:gsub('^%.%./t/browser/screenshots/', 'screenshots/')
  return el
end

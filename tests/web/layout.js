([root, slack]) => {
  // Loaded by tests/web/layout.py: what inside `root` is out of the window or cut off.
  const top = document.querySelector(root);
  const out = [];
  const W = document.documentElement.clientWidth, H = document.documentElement.clientHeight;
  const name = (e) => e.id ? `#${e.id}` : `${e.tagName.toLowerCase()}.${[...e.classList].join('.')}`;
  const path = (e) => { const p = []; for (let n = e; n && n !== top.parentElement; n = n.parentElement) p.unshift(name(n)); return p.slice(-4).join(' > '); };
  for (const e of [top, ...top.querySelectorAll('*')]) {
    const r = e.getBoundingClientRect();
    if (!r.width || !r.height || e.closest('.sr-only')) continue;
    const style = getComputedStyle(e);
    if (style.visibility === 'hidden') continue;
    if (r.left < -slack || r.top < -slack || r.right > W + slack || r.bottom > H + slack) {
      out.push(`${path(e)} leaves the ${W}x${H} window: ${Math.round(r.left)},${Math.round(r.top)} to ${Math.round(r.right)},${Math.round(r.bottom)}`);
      continue;
    }
    for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) {
      const s = getComputedStyle(a);
      if (s.overflowX === 'visible' && s.overflowY === 'visible') continue;
      const b = a.getBoundingClientRect();
      if (r.left < b.left - slack || r.right > b.right + slack || r.top < b.top - slack || r.bottom > b.bottom + slack) {
        out.push(`${path(e)} is cut off by ${name(a)}: ${Math.round(r.left)},${Math.round(r.top)} to ${Math.round(r.right)},${Math.round(r.bottom)} in ${Math.round(b.left)},${Math.round(b.top)} to ${Math.round(b.right)},${Math.round(b.bottom)}`);
        break;
      }
    }
  }
  const doc = document.documentElement;
  if (doc.scrollHeight > doc.clientHeight) out.push(`the page scrolls: ${doc.scrollHeight} px tall in a ${doc.clientHeight} px window`);
  if (doc.scrollWidth > doc.clientWidth) out.push(`the page scrolls sideways: ${doc.scrollWidth} px wide in ${doc.clientWidth} px`);
  return out;
}

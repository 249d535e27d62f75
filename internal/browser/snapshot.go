package browser

// snapshotJS outlines the page as the model needs it to act: headings,
// links, buttons, fields and other text, each element it could act on
// tagged with a ref ("e12") that browser_click and browser_type accept.
// Roles and names follow the accessibility rules in their simple forms
// (explicit role, aria-label, label elements, text content); hidden
// elements are left out. The refs are data attributes on the live
// elements, so they stay valid until the page changes.
const snapshotJS = `(() => {
  const max = %d;
  let out = [], n = 0, size = 0, cut = false;
  document.querySelectorAll('[data-caduceus-ref]').forEach(e => e.removeAttribute('data-caduceus-ref'));
  const visible = e => { const s = getComputedStyle(e); return s.display !== 'none' && s.visibility !== 'hidden' && (e.offsetWidth || e.offsetHeight || e.getClientRects().length); };
  const clean = t => (t || '').replace(/\s+/g, ' ').trim().slice(0, 200);
  const roleOf = e => {
    const r = e.getAttribute('role'); if (r) return r;
    const t = e.tagName.toLowerCase();
    if (t === 'a' && e.hasAttribute('href')) return 'link';
    if (t === 'button' || (t === 'input' && ['button','submit','reset'].includes(e.type))) return 'button';
    if (t === 'input' && e.type === 'checkbox') return 'checkbox';
    if (t === 'input' && e.type === 'radio') return 'radio';
    if (t === 'input' || t === 'textarea') return 'textbox';
    if (t === 'select') return 'combobox';
    if (/^h[1-6]$/.test(t)) return 'heading';
    if (t === 'img') return 'img';
    return '';
  };
  const nameOf = e => {
    const l = e.getAttribute('aria-label'); if (l) return clean(l);
    if (e.id) { const lab = document.querySelector('label[for="' + CSS.escape(e.id) + '"]'); if (lab) return clean(lab.innerText); }
    if (e.closest('label')) return clean(e.closest('label').innerText);
    if (e.tagName === 'IMG') return clean(e.alt);
    if (e.tagName === 'INPUT' || e.tagName === 'TEXTAREA') return clean(e.placeholder || e.name);
    return clean(e.innerText || e.value);
  };
  const acts = new Set(['link','button','checkbox','radio','textbox','combobox','menuitem','tab','switch','option','searchbox']);
  const push = line => { if (cut) return; if (size + line.length > max) { cut = true; return; } out.push(line); size += line.length + 1; };
  const walk = (node, depth) => {
    if (cut) return;
    if (node.nodeType === 3) { const t = clean(node.textContent); if (t) push('  '.repeat(depth) + 'text "' + t + '"'); return; }
    if (node.nodeType !== 1) return;
    const e = node, tag = e.tagName;
    if (['SCRIPT','STYLE','NOSCRIPT','TEMPLATE','HEAD'].includes(tag) || !visible(e)) return;
    const role = roleOf(e);
    if (role) {
      let line = '  '.repeat(depth) + role;
      if (acts.has(role)) { const ref = 'e' + (++n); e.setAttribute('data-caduceus-ref', ref); line = '  '.repeat(depth) + '[' + ref + '] ' + role; }
      line += ' "' + nameOf(e) + '"';
      if (role === 'heading') line += ' level=' + tag.slice(1);
      if (role === 'link') line += ' -> ' + e.getAttribute('href');
      if (role === 'textbox' || role === 'combobox') line += ' value="' + clean(e.value) + '"';
      if (role === 'checkbox' || role === 'radio') line += e.checked ? ' checked' : ' unchecked';
      if (e.disabled) line += ' disabled';
      push(line);
      if (acts.has(role) || role === 'heading' || role === 'img') return;
    }
    for (const c of e.childNodes) walk(c, role ? depth + 1 : depth);
  };
  if (document.body) walk(document.body, 0);
  return {text: out.join('\n'), truncated: cut, refs: n};
})()`

// textJS is the page's visible text, cut at max characters.
const textJS = `(() => { const t = document.body ? document.body.innerText : ''; return {text: t.slice(0, %d), truncated: t.length > %d}; })()`

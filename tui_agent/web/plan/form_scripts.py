"""The in-page JavaScript that reads a page's forms and names elements by stable selectors.

SELECTORS_JS defines `visible`, `selectorOf` (an element's shortest stable selector: its id, its
name, a data attribute, a class, else a path) and `clickTarget` for the scripts that find
controls. FORMS_JS reads each shown form's selects and text inputs in document order (each with
its options, label and placeholder) and the button that submits it: what a page offers to fill
before it shows any list.
"""

SELECTORS_JS = r"""
const visible = (el) => {
  if (!el.checkVisibility({visibilityProperty: true})) return false;
  const box = el.getBoundingClientRect();
  return box.width > 0 && box.height > 0;
};
const esc = (text) => CSS.escape(text);
const quote = (text) => '"' + text.replace(/\\/g, "\\\\").replace(/"/g, '\\"') + '"';
const countOf = (selector) => {
  try { return document.querySelectorAll(selector).length; } catch { return 0; }
};
const unique = (selector) => countOf(selector) === 1;
const cleanId = (id) => !!id && /^[A-Za-z][\w-]*$/.test(id) && !/\d{3,}/.test(id);
const cleanClass = (c) => /^-?[A-Za-z_][\w-]*$/.test(c) && !/\d{4,}/.test(c)
  && !/^(is-|has-)?(active|selected|current|open|checked|disabled|focus|hover)$/i.test(c);
const clean = (text) => (text || "").replace(/\s+/g, " ").trim();
const selectorOf = (el) => {
  const tag = el.tagName.toLowerCase();
  const tries = [];
  if (cleanId(el.id)) tries.push("#" + esc(el.id));
  const name = el.getAttribute("name");
  const value = el.getAttribute("value");
  if (name && value !== null && /^(checkbox|radio)$/.test(el.type || "")) {
    tries.push(`${tag}[name=${quote(name)}][value=${quote(value)}]`);
  }
  if (name) tries.push(`${tag}[name=${quote(name)}]`);
  for (const attr of ["data-value", "data-sort", "data-filter", "data-id", "aria-label",
    "data-testid", "title"]) {
    const v = el.getAttribute(attr);
    if (v && v.length <= 60) tries.push(`${tag}[${attr}=${quote(v)}]`);
  }
  for (const cls of el.classList) if (cleanClass(cls)) tries.push(`${tag}.${esc(cls)}`);
  const form = el.form && el.form.id ? "#" + esc(el.form.id) : null;
  if (form && name) tries.push(`${form} ${tag}[name=${quote(name)}]`);
  const found = tries.find(unique);
  if (found) return found;
  const parts = [];
  for (let node = el; node && node !== document.documentElement; node = node.parentElement) {
    if (cleanId(node.id)) { parts.unshift("#" + esc(node.id)); break; }
    const parent = node.parentElement;
    const same = [...parent.children].filter((child) => child.tagName === node.tagName);
    const part = node.tagName.toLowerCase();
    parts.unshift(same.length > 1 ? `${part}:nth-of-type(${same.indexOf(node) + 1})` : part);
    if (unique(parts.join(" > "))) break;
  }
  return parts.join(" > ");
};
const positional = (selector) => /:nth-(of-type|child)/.test(selector);
// The closest ancestor of `el` with a stable name, as a selector (null: none near).
const namedAncestor = (el, up = 5) => {
  for (let a = el.parentElement, n = 0; a && a !== document.body && n < up;
       a = a.parentElement, n++) {
    if (cleanId(a.id)) return "#" + esc(a.id);
    const classes = [...a.classList].filter(cleanClass);
    for (const c of classes) {
      const sel = a.tagName.toLowerCase() + "." + esc(c);
      if (unique(sel)) return sel;
    }
    const role = a.getAttribute("role");
    if (role && unique(`[role=${role}]`)) return `[role=${role}]`;
  }
  return null;
};
// How to click `el`: its own selector when it is stable, else a selector naming several plus
// its text (read again on each run).
const clickTarget = (el, text) => {
  const own = selectorOf(el);
  if (!positional(own)) return { selector: own, text: null };
  const base = namedAncestor(el);
  return { selector: (base ? base + " " : "") + el.tagName.toLowerCase(), text };
};
"""

FORMS_JS = (
    "() => {\n"
    + SELECTORS_JS
    + r"""
const labelOf = (el) => {
  const texts = [...(el.labels || [])].map((label) => clean(label.textContent));
  texts.push(el.getAttribute("aria-label"), el.getAttribute("title"));
  return clean(texts.filter(Boolean).join(" "));
};
const isSubmit = (el) => (el.tagName === "BUTTON" && (el.type || "submit") === "submit")
  || (el.tagName === "INPUT" && ["submit", "image"].includes(el.type));
const TEXT_TYPES = ["", "text", "search"];
const forms = [];
for (const form of document.forms) {
  if (!visible(form)) continue;
  const controls = [];
  for (const el of form.elements) {
    if (!visible(el) || el.disabled) continue;
    const base = { selector: selectorOf(el), name: el.getAttribute("name") || el.id || "",
      label: labelOf(el) };
    if (el.tagName === "SELECT" && !el.multiple) {
      const options = [...el.options].filter((option) => !option.disabled).map((option) => ({
        value: option.value, label: clean(option.label || option.text),
        selected: option.selected,
      }));
      controls.push({ kind: "select", ...base, options, placeholder: "" });
    } else if (el.tagName === "INPUT" && !el.readOnly
      && TEXT_TYPES.includes((el.getAttribute("type") || "").toLowerCase())) {
      controls.push({ kind: "input", ...base, options: [],
        placeholder: el.getAttribute("placeholder") || "" });
    }
  }
  if (!controls.length) continue;
  const submit = [...form.elements].find((el) => isSubmit(el) && visible(el));
  forms.push({ selector: selectorOf(form), controls, submit: submit ? selectorOf(submit) : null });
}
return forms;
}"""
)
"""Each shown form with a select or a text input: its controls in order and its submit button."""

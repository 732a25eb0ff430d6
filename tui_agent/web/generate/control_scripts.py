"""The in-page JavaScript that finds a page's list controls (see controls.py).

FIND_CONTROLS_JS reads selects and text inputs (with the button that submits them), checkbox
and radio groups, groups of links and of buttons that sit outside the list items and the
page's own navigation chrome (facet links, sort bars, filter chips), and the toggles of
dropdowns that open on a click. MENU_JS reads what a toggle's click showed: the entries of
its menu. Each control carries its distance from the list, so the nearest is tried first.
"""

from tui_agent.web.page_js import CONTROL_WORDS_JS
from tui_agent.web.plan.form_scripts import SELECTORS_JS

FIND_CONTROLS_JS = (
    "(arg) => {\n"
    + SELECTORS_JS
    + CONTROL_WORDS_JS
    + r"""
let items = [];
try { items = arg.item ? [...document.querySelectorAll(arg.item)] : []; } catch { items = []; }
const inItem = (el) => items.some((item) => item.contains(el));
const listBox = items.length ? items[0].parentElement : null;
// Steps from `el` to the list in the page's tree: up to the lowest ancestor they share, then
// down to the list.
const distance = (el) => {
  if (!listBox) return 0;
  let up = 0;
  let shared = el;
  for (; shared && !shared.contains(listBox); shared = shared.parentElement) up++;
  let down = 0;
  for (let a = listBox; a && a !== shared; a = a.parentElement) down++;
  return up + down;
};
const CHROME = "header, footer, [role=banner], [role=contentinfo]";
const fieldLabel = (el) => {
  const texts = [];
  for (const label of el.labels || []) {
    let text = "";
    for (const node of label.childNodes) {
      if (node.nodeType === 3) text += node.textContent;
      else if (!node.matches("select, input, textarea, button")) text += node.textContent;
    }
    texts.push(text);
  }
  texts.push(el.getAttribute("aria-label"), el.getAttribute("title"));
  return clean(texts.filter(Boolean).join(" "));
};
const groupLabel = (el) => {
  const box = el.closest("fieldset, [role=group], [role=radiogroup]");
  const legend = box && box.querySelector("legend, [id]");
  const named = box && (box.getAttribute("aria-label") || (legend && clean(legend.textContent)));
  if (named) return named;
  for (let a = el.parentElement, n = 0; a && n < 4; a = a.parentElement, n++) {
    const head = [...a.children].find((k) => /^(H[2-6]|LEGEND|LABEL|STRONG|B|P|SPAN|DT)$/
      .test(k.tagName) && !k.contains(el) && clean(k.textContent).length <= 40
      && !k.querySelector("input, a, button"));
    if (head) return clean(head.textContent).replace(/[:\uff1a]$/, "");
  }
  return "";
};
const isSubmit = (el) =>
  (el.tagName === "BUTTON" && el.type === "submit") ||
  (el.tagName === "INPUT" && ["submit", "image"].includes(el.type));
const APPLY = new RegExp("\\b(apply|search|go|filter|submit|update|find|show|refine|ok|aplicar"
  + "|buscar|filtrar|appliquer|rechercher|filtrer|anwenden|suchen|filtern|pesquisar)\\b", "i");
const submitOf = (el) => {
  if (el.form) {
    const button = [...el.form.elements].find((b) => isSubmit(b) && visible(b));
    return button ? selectorOf(button) : null;
  }
  let scope = el.parentElement;
  for (let depth = 0; scope && depth < 4; depth++, scope = scope.parentElement) {
    const button = [...scope.querySelectorAll("button, input[type=button], [role=button]")]
      .find((b) => visible(b) && APPLY.test(b.innerText || b.value || b.ariaLabel || ""));
    if (button) return selectorOf(button);
  }
  return null;
};
const base = (el) => ({
  selector: selectorOf(el), label: fieldLabel(el), name: el.getAttribute("name") || el.id || "",
  submit: submitOf(el), in_search_form: !!el.closest("[role=search]"),
  distance: distance(el), placeholder: "", input_type: "", opens: null,
});
const controls = [];
for (const el of document.querySelectorAll("select")) {
  if (!visible(el) || el.disabled || el.multiple || inItem(el)) continue;
  const options = [...el.options]
    .filter((option) => !option.disabled)
    .map((option) => ({
      value: option.value, label: clean(option.label || option.text), selected: option.selected,
    }));
  controls.push({ kind: "select", ...base(el), options });
}
const TEXT_TYPES = ["", "text", "search"];
for (const el of document.querySelectorAll("input")) {
  const type = (el.getAttribute("type") || "").toLowerCase();
  if (!TEXT_TYPES.includes(type) || !visible(el) || el.disabled || el.readOnly || inItem(el)) {
    continue;
  }
  controls.push({
    kind: "input", ...base(el), options: [],
    placeholder: el.getAttribute("placeholder") || "", input_type: type || "text",
  });
}
// Checkbox and radio groups (a group: one name, or one fieldset); custom ones by role.
const boxes = [...document.querySelectorAll("input[type=checkbox], input[type=radio], "
  + "[role=checkbox], [role=radio], [role=menuitemradio], [role=menuitemcheckbox]")]
  .filter((el) => !el.disabled && el.getAttribute("aria-disabled") !== "true" && !inItem(el));
const groups = new Map();
for (const el of boxes) {
  const box = el.closest("fieldset, [role=group], [role=radiogroup]");
  const key = el.getAttribute("name") || (box && selectorOf(box)) || selectorOf(el.parentElement);
  if (!groups.has(key)) groups.set(key, []);
  groups.get(key).push(el);
}
for (const [key, members] of groups) {
  const first = members[0];
  const radio = /radio/.test(first.type || first.getAttribute("role") || "");
  const options = [];
  for (const el of members) {
    // A hidden native box is clicked through its label (custom-styled checkboxes).
    const label = el.labels && el.labels[0];
    const target = visible(el) ? el : label && visible(label) ? label : null;
    if (!target) continue;
    const text = clean(fieldLabel(el) || (label && label.textContent) || el.textContent);
    const click = target === el ? { selector: selectorOf(el), text: null }
      : clickTarget(label, text);
    options.push({
      value: el.getAttribute("value") || text, label: text,
      selected: !!el.checked || el.getAttribute("aria-checked") === "true", ...click,
    });
  }
  if (!options.length) continue;
  controls.push({
    kind: radio ? "radio" : "checkbox", ...base(first), selector: key.startsWith("#")
      || key.includes("[") || key.includes(".") ? key : `input[name=${quote(key)}]`,
    label: groupLabel(first), name: first.getAttribute("name") || "", options,
  });
}
// Groups of links and of buttons outside the items and the page chrome: facet links, sort
// bars, filter chips. A pager's links are not filters.
const clickables = [...document.querySelectorAll("a[href], button, [role=button], [role=tab], "
  + "[role=link]")].filter((el) => visible(el) && !inItem(el) && !el.closest(CHROME)
  && !el.closest("form") && !el.matches("[rel~=next], [rel~=prev]") && !saysNext(el)
  && !/^\d{1,4}$/.test(labelOf(el)) && labelOf(el).length <= 60
  && el.getAttribute("aria-haspopup") === null);
const bars = new Map();
for (const el of clickables) {
  const kind = el.matches("a[href]") ? "links" : "buttons";
  let box = el.parentElement;
  while (box && box !== document.body && box.children.length < 2) box = box.parentElement;
  if (box && box.tagName === "LI") box = box.parentElement || box;
  const key = kind + "|" + (box ? selectorOf(box) : "body");
  if (!bars.has(key)) bars.set(key, { kind, box, members: [] });
  bars.get(key).members.push(el);
}
for (const { kind, box, members } of bars.values()) {
  if (members.length < 2 && !(kind === "buttons" && members.length === 1)) continue;
  const options = members.map((el) => {
    const text = labelOf(el);
    return {
      value: el.getAttribute("href") || el.getAttribute("data-value")
        || el.getAttribute("data-sort") || text,
      label: text,
      selected: el.matches("[aria-current], [aria-pressed=true], [aria-selected=true]"),
      ...clickTarget(el, text),
    };
  });
  const where = box ? selectorOf(box) : "body";
  controls.push({
    kind, ...base(members[0]), selector: where, label: box ? groupLabel(members[0]) : "",
    name: "", submit: null, options,
  });
}
return controls;
}"""
)

TOGGLES_JS = (
    "(arg) => {\n"
    + SELECTORS_JS
    + r"""
let items = [];
try { items = arg.item ? [...document.querySelectorAll(arg.item)] : []; } catch { items = []; }
const inItem = (el) => items.some((item) => item.contains(el));
const TOGGLES = "[aria-haspopup]:not([aria-haspopup=false]), button[aria-expanded=false], "
  + "[role=button][aria-expanded=false], [role=combobox], details > summary, "
  + "[class*=dropdown i] > button, button[class*=dropdown i], [class*=select i] > button";
return [...document.querySelectorAll(TOGGLES)]
  .filter((el) => visible(el) && !inItem(el) && !el.closest("header, footer, nav")
    && !(el.matches("a[href]") && !/^\s*(#|javascript:)/i.test(el.getAttribute("href"))))
  .slice(0, arg.limit)
  .map((el) => ({ selector: selectorOf(el), label: clean(el.innerText || el.getAttribute(
    "aria-label") || "") }));
}"""
)

MARK_SHOWN_JS = (
    "() => {\n"
    + SELECTORS_JS
    + r"""
window.__tuiShownBefore = new Set([...document.querySelectorAll("*")].filter(visible));
}"""
)

# {toggle, item}: the entries a click on the toggle showed (clickables that were not shown
# before), in the menu it opened: its selector and each entry's label and click target.
MENU_JS = (
    "(arg) => {\n"
    + SELECTORS_JS
    + r"""
const before = window.__tuiShownBefore || new Set();
delete window.__tuiShownBefore;
const toggle = document.querySelector(arg.toggle);
const ENTRIES = "[role=option], [role=menuitem], [role=menuitemradio], [role=menuitemcheckbox], "
  + "li, a[href], button, label, [data-value]";
const fresh = [...document.querySelectorAll(ENTRIES)].filter((el) => visible(el)
  && !before.has(el) && el !== toggle && !(toggle && toggle.contains(el))
  && clean(el.innerText).length > 0 && clean(el.innerText).length <= 60);
// The innermost entries: a li holding a link is one entry, the link.
const entries = fresh.filter((el) => !fresh.some((o) => o !== el && el.contains(o)));
if (!entries.length) return null;
let menu = entries[0].parentElement;
while (menu && !entries.every((el) => menu.contains(el))) menu = menu.parentElement;
const controlled = toggle && toggle.getAttribute("aria-controls");
const menuSelector = controlled && cleanId(controlled) ? "#" + esc(controlled)
  : menu ? selectorOf(menu) : null;
return {
  menu: menuSelector,
  options: entries.map((el) => {
    const text = clean(el.innerText);
    const target = clickTarget(el, text);
    const scoped = menuSelector && target.text
      ? { selector: menuSelector + " " + el.tagName.toLowerCase(), text } : target;
    return {
      value: el.getAttribute("data-value") || el.getAttribute("href") || text, label: text,
      selected: el.matches("[aria-selected=true], [aria-checked=true]"), ...scoped,
    };
  }),
};
}"""
)

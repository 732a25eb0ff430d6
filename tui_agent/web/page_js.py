"""In-page JavaScript shared by the probes and the recipe interpreter.

MEMBERS_JS: a list item that spans several sibling elements (a title row and a tag row, a
`dt` and its `dd`s, a heading and its paragraphs) is its first element, the "anchor" that
LIST_ITEM matches, plus the following siblings that LIST_ITEM_SIBLINGS matches, up to the next
anchor. CONTROLS_WORDS_JS: what a next-page control says in the languages the agent reads
(English, Spanish, French, German, Portuguese, Italian, Dutch, the Nordic and Slavic ones,
Chinese, Japanese, Korean, Arabic, Hebrew), a clickable's label, and the current page's number
(`window.__tuiClickable` is page_wait.INSTRUMENT_JS's record of click listeners).
"""

MEMBERS_JS = r"""
// The elements of the item whose first element is `el` (in page order): `siblings` is a
// selector (following siblings matching it, up to the next `item`) or a count (the next N).
const membersOf = (el, siblings, item) => {
  const out = [el];
  if (!siblings) return out;
  const counted = typeof siblings === "number";
  for (let next = el.nextElementSibling; next; next = next.nextElementSibling) {
    if (counted && out.length > siblings) break;
    let joins = false;
    try {
      joins = !next.matches(item) && (counted || next.matches(siblings));
    } catch (e) { joins = false; }
    if (!joins) break;
    out.push(next);
  }
  return out;
};
// Every element matching `selector` in an item: inside its first element (as querySelectorAll
// does), and the other members themselves or inside them. ":scope" is the first element; a
// selector that is not valid CSS throws, as querySelectorAll does.
const allInMembers = (members, selector) => {
  if (selector === ":scope") return [members[0]];
  const found = [];
  members.forEach((member, index) => {
    if (index > 0 && member.matches(selector)) found.push(member);
    found.push(...member.querySelectorAll(selector));
  });
  return found;
};
const membersText = (members) => members.map((m) => m.innerText || m.textContent || "")
  .join("\n");
"""

CONTROL_WORDS_JS = r"""
const NEXT_WORDS = new RegExp("^(?:next|next page|next results|older|older posts|older entries"
  + "|more results|siguiente|siguientes|p\u00e1gina siguiente|suivant|suivante|page suivante"
  + "|weiter|n\u00e4chste|n\u00e4chste seite|vor|pr\u00f3xima|pr\u00f3ximo|pr\u00f3xima p\u00e1gina"
  + "|seguinte|avanti|successivo|successiva|pagina successiva|volgende|n\u00e4sta|neste|n\u00e6ste"
  + "|nast\u0119pna|dalej|dal\u0161\u00ed|sonraki|\u4e0b\u4e00\u9875|\u4e0b\u4e00\u9801"
  + "|\u4e0b\u9875|\u6b21\u3078|\u6b21\u306e\u30da\u30fc\u30b8|\u6b21|\ub2e4\uc74c"
  + "|\u0434\u0430\u043b\u0435\u0435|\u0441\u043b\u0435\u0434\u0443\u044e\u0449\u0430\u044f"
  + "|\u0432\u043f\u0435\u0440\u0451\u0434|\u0648\u0627\u0644\u062a\u0627\u0644\u064a"
  + "|\u0627\u0644\u062a\u0627\u0644\u064a|\u05d4\u05d1\u05d0)$", "i");
const NEXT_LABEL = new RegExp("(?<!\\p{L})(?:next|siguiente|suivante?|weiter|n\u00e4chste"
  + "|pr\u00f3xim[ao]|seguinte|successiv[ao]|volgende)(?!\\p{L})", "iu");
const PREVIOUS_LABEL = new RegExp("(?<!\\p{L})(?:prev|previous|back|newer|anterior"
  + "|pr\u00e9c\u00e9dente?|zur\u00fcck|vorherige|precedente|vorige)(?!\\p{L})", "iu");
const ARROWS = /[\u203a\u00bb>\u2192\u27e9\u276f\u25b8\u25b6\u25b7\u21d2\u21e8\u27f6\u2771]/g;
const labelOf = (el) => (el.innerText || el.value || el.getAttribute("aria-label")
  || el.getAttribute("title") || "").replace(/\s+/g, " ").trim();
// Whether a clickable's label says "next page": a next word, with arrows or not, or arrows
// alone; its aria-label or title may say it in a sentence ("Go to the next page").
// An arrow served as UTF-8 but read as Latin-1 / windows-1252 (a page with no charset): "»"
// shows as "Â»", U+203A as "â€º". Such a word of its own is no word.
const MOJIBAKE = /(?:^|\s)[\u00c2\u00c3\u00e2][^\sA-Za-z0-9]{0,2}(?=\s|$)/gu;
const saysNext = (el) => {
  const text = labelOf(el);
  const bare = text.replace(ARROWS, " ").replace(MOJIBAKE, " ").replace(/\s+/g, " ").trim()
    .toLowerCase();
  if (text && !bare) return true;
  if (bare && NEXT_WORDS.test(bare)) return true;
  const aria = el.getAttribute("aria-label") || el.getAttribute("title") || "";
  return NEXT_LABEL.test(aria) && !PREVIOUS_LABEL.test(aria);
};
// Whether a script makes `el` clickable: an onclick attribute, a click listener added to it
// (page_wait's init script keeps track), a role or tabindex, or a pointer cursor on a link.
const scriptClickable = (el) => el.hasAttribute("onclick") || el.hasAttribute("role")
  || el.hasAttribute("tabindex") || !!(window.__tuiClickable && window.__tuiClickable.has(el))
  || (el.tagName === "A" && getComputedStyle(el).cursor === "pointer");
// Whether a control is shown disabled: by its state, or a "disabled" class on it or its parent
// (a pager's last page); `strict` also counts a link without an address no script handles.
const looksDisabled = (el, strict = true) => el.disabled
  || el.getAttribute("aria-disabled") === "true"
  || [el, el.parentElement].some((a) => a && [...a.classList].some((c) => /disabled/i.test(c)))
  || (strict && el.tagName === "A" && !el.hasAttribute("href") && !scriptClickable(el));
const normalLabel = (text) => text.replace(/\s+/g, " ").replace(/\s*[(\[]\d+[)\]]$/, "")
  .trim().toLowerCase();
const PAGE_NUMBER = /^\d{1,4}$/;
const CURRENT_MARKS = "[aria-current=page], [aria-current=true], .current, .active, .selected, "
  + "[class*=current], [class*=this-page], [class*=selected], [class*=active]";
// Whether a page number `el` has, near it (in its parent or grandparent), a link to the page
// before or after it: it is in a pager.
const amidPageLinks = (el) => {
  const number = Number(labelOf(el));
  const near = [number - 1, number + 1].map(String);
  for (let box = el.parentElement, up = 0; box && up < 2; box = box.parentElement, up++) {
    if ([...box.querySelectorAll("a[href]")].some((a) => near.includes(labelOf(a)))) return true;
  }
  return false;
};
// The shown numbers that may be the current page, best first: those marked as current, then
// a number that is no link amid links to the pages around it (Django's `span.this-page`).
const currentPages = () => {
  const shownNumber = (el) => el.checkVisibility() && PAGE_NUMBER.test(labelOf(el));
  const marked = [...document.querySelectorAll(CURRENT_MARKS)].filter(shownNumber);
  const bare = [...document.querySelectorAll("span, strong, b, em, li, td, a:not([href])")]
    .filter((el) => el.children.length === 0 && shownNumber(el) && amidPageLinks(el));
  return [...marked, ...bare.filter((el) => !marked.includes(el))];
};
// The index (among `candidates`) of the next-page control: the one whose label is `text`
// (else any that says "next"), or the page number after the current one (`numbered`).
const nextControl = (candidates, text, numbered) => {
  if (numbered) {
    for (const current of currentPages()) {
      const wanted = String(Number(labelOf(current)) + 1);
      const index = candidates.findIndex((el) => labelOf(el) === wanted);
      if (index >= 0) return index;
    }
    return -1;
  }
  const exact = candidates.findIndex((el) => normalLabel(labelOf(el)) === normalLabel(text));
  return exact >= 0 ? exact : candidates.findIndex(saysNext);
};
"""

// Demo Market: the behaviour of each layout. Markup mirrors markup.py exactly.
"use strict";

(() => {
  const body = document.body;
  const layout = body.dataset.layout;
  const list = document.getElementById("product-list");
  const panel = document.getElementById("details-panel");
  const batchSize = Number(body.dataset.batchSize);
  const batchDelay = Number(body.dataset.batchDelay);
  const slowDelay = Number(body.dataset.slowDelay);
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const LABELS = [
    ["price", "Price"],
    ["currency", "Currency"],
    ["rating", "Rating"],
    ["date", "Listed"],
    ["seller", "Seller"],
    ["category", "Category"],
    ["tags", "Tags"],
  ];

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function stars(count) {
    const node = el("span", "stars", "★".repeat(count) + "☆".repeat(5 - count));
    node.setAttribute("aria-hidden", "true");
    return node;
  }

  function tagsInto(parent, tags) {
    tags.forEach((tag, index) => {
      if (index > 0) parent.append(", ");
      parent.append(el("span", "tag", tag));
    });
    return parent;
  }

  function dateNode(className, value) {
    const node = el("time", className, value);
    node.setAttribute("datetime", value);
    return node;
  }

  function fieldsInto(parent, p) {
    const dl = el("dl", "fields");
    for (const [field, label] of LABELS) {
      if (!(field in p)) continue;
      dl.append(el("dt", "", label));
      const dd = el("dd");
      if (field === "rating") {
        dd.append(stars(p.stars), " ", el("span", "field-rating", p.rating));
      } else if (field === "date") {
        dd.append(dateNode("field-date", p.date));
      } else if (field === "tags") {
        dd.className = "field-tags";
        tagsInto(dd, p.tags);
      } else {
        dd.className = `field-${field}`;
        dd.textContent = p[field];
      }
      dl.append(dd);
    }
    parent.append(dl);
    if ("description" in p) parent.append(el("p", "field-description", p.description));
    return parent;
  }

  function thumb(p) {
    const node = el("div", "thumb");
    node.style.setProperty("--hue", p.hue);
    node.dataset.initials = p.initials;
    node.setAttribute("aria-hidden", "true");
    return node;
  }

  function fullCard(p) {
    const card = el("li", "card card-full");
    card.dataset.slug = p.slug;
    const cardBody = el("div", "card-body");
    const title = el("h3", "card-title");
    const link = el("a", "details-link", p.title);
    link.href = p.url;
    title.append(link);
    cardBody.append(title);
    if ("price" in p) {
      const price = el("p", "card-price");
      price.append(el("span", "price", p.price), " ", el("span", "currency", p.currency));
      cardBody.append(price);
    }
    if ("rating" in p) {
      const rating = el("p", "card-rating");
      rating.append(stars(p.stars), " ", el("span", "rating", p.rating));
      cardBody.append(rating);
    }
    if ("description" in p) cardBody.append(el("p", "description", p.description));
    const meta = [];
    if ("seller" in p) meta.push(el("span", "seller", p.seller));
    meta.push(el("span", "category", p.category));
    if ("date" in p) meta.push(dateNode("date", p.date));
    const metaLine = el("p", "card-meta");
    meta.forEach((node, index) => {
      if (index > 0) metaLine.append(" · ");
      metaLine.append(node);
    });
    cardBody.append(metaLine);
    if ("tags" in p) cardBody.append(tagsInto(el("p", "tags"), p.tags));
    card.append(thumb(p), cardBody);
    return card;
  }

  // Side panel: cleared at once on click, filled when the product's JSON arrives.
  let shown = 0;
  async function showPanel(card) {
    const ticket = ++shown;
    document.querySelectorAll("li.card.selected").forEach((c) => c.classList.remove("selected"));
    card.classList.add("selected");
    delete panel.dataset.slug;
    panel.replaceChildren(el("p", "panel-loading", "Loading…"));
    const response = await fetch(`/api/products/${card.dataset.slug}?layout=${layout}`);
    const p = await response.json();
    if (ticket !== shown) return;
    const close = el("button", "panel-close", "×");
    close.type = "button";
    close.setAttribute("aria-label", "Close details");
    close.addEventListener("click", closePanel);
    const link = el("a", "field-url", "Open the product page →");
    link.href = p.url;
    panel.replaceChildren(close, el("h2", "field-title", p.title));
    fieldsInto(panel, p);
    panel.append(link);
    panel.dataset.slug = p.slug;
  }

  function closePanel() {
    shown += 1;
    delete panel.dataset.slug;
    document.querySelectorAll("li.card.selected").forEach((c) => c.classList.remove("selected"));
    panel.replaceChildren(el("p", "panel-empty", "Select a product to see its details."));
  }

  // Modal: a dialog over a backdrop that covers the whole page, so the list cannot be clicked
  // while it is open. Only its × button closes it: not Escape, not a click on the backdrop.
  let modal = null;
  async function showModal(card) {
    const ticket = ++shown;
    const backdrop = el("div", "modal-backdrop");
    const dialog = el("div", "modal");
    dialog.id = "details-modal";
    dialog.setAttribute("role", "dialog");
    dialog.setAttribute("aria-modal", "true");
    dialog.setAttribute("aria-label", "Product details");
    const close = el("button", "modal-close", "×");
    close.type = "button";
    close.setAttribute("aria-label", "Close");
    close.addEventListener("click", closeModal);
    dialog.append(close, el("p", "panel-loading", "Loading…"));
    backdrop.append(dialog);
    document.body.append(backdrop);
    document.body.classList.add("modal-open");
    modal = backdrop;
    const response = await fetch(`/api/products/${card.dataset.slug}?layout=${layout}`);
    const p = await response.json();
    if (ticket !== shown || modal !== backdrop) return;
    const link = el("a", "field-url", "Open the product page →");
    link.href = p.url;
    dialog.replaceChildren(close, el("h2", "field-title", p.title));
    fieldsInto(dialog, p);
    dialog.append(link);
    dialog.dataset.slug = p.slug;
  }

  function closeModal() {
    shown += 1;
    if (modal) modal.remove();
    modal = null;
    document.body.classList.remove("modal-open");
  }

  // Inline: details built from the page's embedded catalog, removed again on the next click.
  const catalogData = document.getElementById("catalog-data");
  const catalog = catalogData ? JSON.parse(catalogData.textContent) : {};
  function toggleInline(card) {
    const button = card.querySelector("button.toggle-details");
    const open = card.querySelector(".card-details");
    if (open) {
      open.remove();
      card.classList.remove("expanded");
      button.setAttribute("aria-expanded", "false");
      button.textContent = "Show details";
      return;
    }
    card.append(fieldsInto(el("div", "card-details"), catalog[card.dataset.slug]));
    card.classList.add("expanded");
    button.setAttribute("aria-expanded", "true");
    button.textContent = "Hide details";
  }

  if (list) {
    list.addEventListener("click", (event) => {
      const card = event.target.closest("li.card");
      if (!card || event.target.closest(".card-details")) return;
      if (layout === "navigate") {
        if (!event.target.closest("a")) window.location.href = card.querySelector("a").href;
        return;
      }
      event.preventDefault();
      if (layout === "inline") toggleInline(card);
      else if (layout === "modal") showModal(card);
      else if (panel) showPanel(card);
    });
  }

  async function fetchBatch(offset, limit) {
    const response = await fetch(`/api/products?layout=${layout}&offset=${offset}&limit=${limit}`);
    return response.json();
  }

  function endOfList(after) {
    after.after(el("p", "end-of-list", "End of list"));
  }

  // Infinite scroll: a batch whenever the sentinel under the list comes near the viewport.
  if (layout === "infinite") {
    const sentinel = document.getElementById("list-sentinel");
    let offset = 0;
    let loading = false;
    const nearBottom = () => sentinel.getBoundingClientRect().top < window.innerHeight + 200;
    async function loadBatch() {
      if (loading || !sentinel.isConnected) return;
      loading = true;
      const indicator = el("p", "loading-more", "Loading more products…");
      sentinel.before(indicator);
      if (offset > 0) await sleep(batchDelay);
      const batch = await fetchBatch(offset, batchSize);
      batch.items.forEach((p) => list.append(fullCard(p)));
      offset += batch.items.length;
      indicator.remove();
      loading = false;
      if (batch.next_offset === null) {
        observer.disconnect();
        endOfList(sentinel);
        sentinel.remove();
      } else if (nearBottom()) {
        loadBatch();
      }
    }
    const observer = new IntersectionObserver(
      (entries) => {
        if (entries.some((entry) => entry.isIntersecting)) loadBatch();
      },
      { rootMargin: "0px 0px 200px 0px" },
    );
    observer.observe(sentinel);
  }

  // Load more: the button appends a batch and disappears after the last one.
  const loadMore = document.querySelector("button.load-more");
  if (loadMore) {
    loadMore.addEventListener("click", async () => {
      if (loadMore.disabled) return;
      loadMore.disabled = true;
      loadMore.textContent = "Loading…";
      await sleep(batchDelay);
      const batch = await fetchBatch(Number(loadMore.dataset.nextOffset), batchSize);
      batch.items.forEach((p) => list.append(fullCard(p)));
      if (batch.next_offset === null) {
        endOfList(loadMore);
        loadMore.remove();
      } else {
        loadMore.dataset.nextOffset = batch.next_offset;
        loadMore.disabled = false;
        loadMore.textContent = "Load more";
      }
    });
  }

  // Late: no spinner. The script waits, then asks the server, which answers seconds later.
  if (layout === "late") {
    (async () => {
      await sleep(Number(document.getElementById("late-config").dataset.wait));
      const response = await fetch("/api/late");
      const batch = await response.json();
      batch.items.forEach((p) => list.append(fullCard(p)));
    })();
  }

  // Facets and dropdown: the page's catalog, narrowed and ordered by script.
  const catalogList = catalogData && Array.isArray(catalog) ? catalog : null;
  const state = { tags: new Set(), sort: "featured", category: "" };
  function renderCatalog() {
    const rows = catalogList
      .filter((p) => !state.category || p.category_slug === state.category)
      .filter((p) => [...state.tags].every((tag) => p.tags.includes(tag)))
      .sort((a, b) => a.places[state.sort] - b.places[state.sort]);
    list.replaceChildren(...rows.map(fullCard));
  }
  if (catalogList && (layout === "facets" || layout === "dropdown")) {
    const query = new URLSearchParams(window.location.search);
    state.sort = query.get("sort") || "featured";
    if (layout === "dropdown") state.category = query.get("category") || "";
    if (query.get("tag")) state.tags.add(query.get("tag"));
    document.querySelectorAll("input[name=tag]").forEach((box) => {
      box.checked = state.tags.has(box.value);
      box.addEventListener("change", () => {
        if (box.checked) state.tags.add(box.value);
        else state.tags.delete(box.value);
        renderCatalog();
      });
    });
    document.querySelectorAll("button[data-sort]").forEach((button) => {
      button.addEventListener("click", () => {
        state.sort = button.dataset.sort;
        renderCatalog();
      });
    });
    document.querySelectorAll("input[name=order]").forEach((radio) => {
      radio.checked = radio.value === state.sort;
      radio.addEventListener("change", () => {
        state.sort = radio.value;
        renderCatalog();
      });
    });
    const toggle = document.querySelector(".picker-toggle");
    const menu = document.getElementById("category-menu");
    if (toggle && menu) {
      const setOpen = (open) => {
        menu.hidden = !open;
        toggle.setAttribute("aria-expanded", String(open));
      };
      toggle.addEventListener("click", () => setOpen(menu.hidden));
      document.addEventListener("keydown", (event) => {
        if (event.key === "Escape") setOpen(false);
      });
      menu.addEventListener("click", (event) => {
        const entry = event.target.closest("[role=option]");
        if (!entry) return;
        state.category = entry.dataset.value;
        toggle.textContent = `Category: ${state.category ? entry.textContent : "All"} ▾`;
        setOpen(false);
        renderCatalog();
      });
    }
    renderCatalog();
  }

  // Escape: a native dialog shown modally (it blocks the page); no close button, only the
  // Escape key (the browser's own) closes it.
  if (layout === "escape") {
    list.addEventListener("click", async (event) => {
      const card = event.target.closest("li.card");
      if (!card) return;
      event.preventDefault();
      const dialog = el("dialog", "quick-look");
      dialog.addEventListener("close", () => dialog.remove());
      document.body.append(dialog);
      dialog.showModal();
      const response = await fetch(`/api/products/${card.dataset.slug}?layout=${layout}`);
      const p = await response.json();
      if (!dialog.isConnected) return;
      const link = el("a", "field-url", "Open the product page →");
      link.href = p.url;
      dialog.append(el("h2", "field-title", p.title));
      fieldsInto(dialog, p);
      dialog.append(link);
    });
  }

  // Slow: the whole list after a delay, behind a spinner that is then removed.
  if (layout === "slow") {
    (async () => {
      await sleep(slowDelay);
      const batch = await fetchBatch(0, 1000);
      batch.items.forEach((p) => list.append(fullCard(p)));
      document.querySelector(".loading-spinner").remove();
    })();
  }
})();

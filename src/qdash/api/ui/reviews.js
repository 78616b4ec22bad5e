// The Reviews view: the project's AI reviews (GET /copilot/reviews) filtered by chip, task, decision
// and label, each with its decision badge; a row opens the review (its note) and the result's figure.
"use strict";

const QReviews = (() => {
  const $ = (id) => document.getElementById(id);
  const el = (...args) => QRender.el(...args);
  const PAGE = 50;
  let offset = 0;
  let loaded = false;

  function query() {
    const params = new URLSearchParams({ limit: String(PAGE), offset: String(offset) });
    const filters = { chip_id: "review-chip", task_name: "review-task", decision: "review-decision", label: "review-label" };
    for (const [name, id] of Object.entries(filters)) {
      const value = $(id).value.trim();
      if (value) params.set(name, value);
    }
    return params;
  }

  function decisionBadge(decision) {
    return el("span", "decision " + decision.toLowerCase(), decision);
  }

  function row(review) {
    const tr = el("tr");
    tr.dataset.reviewId = review.review_id;
    const decision = el("td");
    decision.appendChild(decisionBadge(review.decision));
    const reason = el("td", "reason", review.reason);
    reason.title = review.reason;
    tr.append(decision, el("td", "", review.label), el("td", "", review.task_name), el("td", "", "Q" + review.qid),
      el("td", "", review.chip_id), reason, el("td", "muted", review.source + " · " + review.model));
    tr.addEventListener("click", () => openReview(review, tr));
    return tr;
  }

  // Filters changed: from the first page; "More" appends the next page.
  async function load(more) {
    offset = more ? offset + PAGE : 0;
    const body = $("review-rows");
    const status = $("reviews-status");
    status.textContent = "Loading…";
    try {
      const data = await QApi.json("/copilot/reviews?" + query().toString());
      if (!more) body.innerHTML = "";
      for (const review of data.reviews) body.appendChild(row(review));
      const shown = body.children.length;
      status.textContent = shown ? shown + (shown === 1 ? " review" : " reviews") : "No reviews match these filters.";
      $("reviews-more").hidden = data.reviews.length < PAGE;
      loaded = true;
    } catch (e) {
      status.textContent = "Error: " + e.message;
    }
  }

  // The review in full (its markdown note) and the result's own figure, fetched with the token.
  async function openReview(review, tr) {
    for (const selected of $("review-rows").querySelectorAll("tr.selected")) selected.classList.remove("selected");
    tr.classList.add("selected");
    const detail = $("review-detail");
    detail.hidden = false;
    detail.innerHTML = "";
    const heading = el("h3", "", review.task_name + " · Q" + review.qid + " · " + review.chip_id + " ");
    heading.appendChild(decisionBadge(review.decision));
    detail.appendChild(heading);
    const figure = {
      id: review.task_id, task_name: review.task_name, qid: review.qid, chip_id: review.chip_id,
      url: "/copilot/figures/" + encodeURIComponent(review.task_id),
    };
    QRender.renderFigure(detail, { content: "Result figure", figure: figure });
    const note = el("div", "text note", "…");
    detail.appendChild(note);
    try {
      const full = await QApi.json("/copilot/reviews/" + encodeURIComponent(review.review_id));
      note.innerHTML = QMarkdown.render(full.note || full.verdict.reason);
    } catch (e) {
      note.textContent = "Error: " + e.message;
    }
  }

  function show(visible) {
    $("reviews-view").hidden = !visible;
    $("chat-view").hidden = visible;
    $("show-reviews").classList.toggle("active", visible);
    $("show-chat").classList.toggle("active", !visible);
    if (visible && !loaded) load(false);
  }

  // A sign-in or another project: nothing of the previous list stays.
  function reset() {
    loaded = false;
    $("review-rows").innerHTML = "";
    $("review-detail").hidden = true;
    $("reviews-status").textContent = "";
    if (!$("reviews-view").hidden) load(false);
  }

  $("review-filters").addEventListener("submit", (event) => { event.preventDefault(); load(false); });
  for (const id of ["review-decision", "review-label"]) $(id).addEventListener("change", () => load(false));
  $("reviews-more").addEventListener("click", () => load(true));
  $("show-reviews").addEventListener("click", () => show(true));
  $("show-chat").addEventListener("click", () => show(false));

  return { reset, show };
})();

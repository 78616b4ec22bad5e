// How an answer looks: markdown text, Plotly charts, the assessment badge, run figures (fetched with
// the token, shown inline with task, qubit and time), ask_user choices as buttons, turn-state badges.
"use strict";

const QRender = (() => {
  const figureUrls = [];

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // plotly.js 3 only accepts {text} titles; models (and the dashboard contract) also send plain strings.
  function normaliseTitles(layout) {
    const out = Object.assign({}, layout);
    if (typeof out.title === "string") out.title = { text: out.title };
    for (const key of Object.keys(out)) {
      if (/^[xy]axis\d*$/.test(key) && out[key] && typeof out[key].title === "string") {
        out[key] = Object.assign({}, out[key], { title: { text: out[key].title } });
      }
    }
    return out;
  }

  function renderChart(container, chart) {
    const div = el("div", "chart");
    container.appendChild(div);
    const layout = Object.assign(
      { autosize: true, height: 300, paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "rgba(0,0,0,0)", font: { size: 11 } },
      normaliseTitles(chart.layout || {})
    );
    try {
      Plotly.newPlot(div, chart.data || [], layout, { responsive: true, displaylogo: false });
    } catch (e) {
      div.textContent = "Chart rendering failed. The data may be in an unsupported format.";
    }
  }

  // ``start_at`` comes formatted in the deployment's timezone, as the tools show times to the model.
  function figureCaption(ref) {
    return [ref.task_name, "Q" + ref.qid, ref.chip_id, ref.start_at].filter(Boolean).join(" · ");
  }

  // The run's own figure: the caption first (it is all a failed fetch leaves), the image when loaded.
  function renderFigure(container, block) {
    const ref = block.figure;
    const figure = el("figure", "run-figure");
    figure.dataset.taskId = ref.id;
    const img = el("img");
    img.alt = block.content || figureCaption(ref);
    const caption = el("figcaption", "", figureCaption(ref));
    figure.append(img, caption);
    container.appendChild(figure);
    QApi.blobUrl(ref.url).then((url) => {
      figureUrls.push(url);
      img.src = url;
    }).catch((e) => {
      img.remove();
      figure.classList.add("unavailable");
      caption.textContent = figureCaption(ref) + " — figure unavailable: " + e.message;
    });
  }

  // ask_user: the question and one button per option; a click sends the option as the next message.
  function renderChoices(container, choices, onChoose) {
    const box = el("div", "choices");
    const question = el("div", "text");
    question.innerHTML = QMarkdown.render(choices.question);
    const buttons = el("div", "chips");
    for (const option of choices.options) {
      const button = el("button", "chip choice", option);
      button.type = "button";
      button.disabled = !onChoose;
      button.addEventListener("click", () => {
        for (const b of buttons.children) b.disabled = true;
        button.classList.add("chosen");
        onChoose(option);
      });
      buttons.appendChild(button);
    }
    box.append(question, buttons);
    container.appendChild(box);
  }

  // A proposed lab action: its label and arguments, Approve / Decline. A click sends the newest
  // upstream dashboard's message ("Approved: <label>") with ``approval: {id, approve}``; nothing is
  // written before that (docs/actions.md).
  function renderApproval(container, approval, onChoose) {
    const card = el("div", "approval");
    card.appendChild(el("div", "approval-title", "Approve this action?"));
    card.appendChild(el("div", "approval-label", approval.label));
    const args = el("dl", "approval-args");
    for (const [name, value] of Object.entries(approval.args || {})) {
      if (value === null || value === undefined) continue;
      args.append(el("dt", "", name), el("dd", "", String(value)));
    }
    const buttons = el("div", "chips");
    const decide = (approve) => {
      for (const b of buttons.children) b.disabled = true;
      card.appendChild(el("div", "approval-decided", (approve ? "Approved: " : "Declined: ") + approval.label));
      onChoose((approve ? "Approved: " : "Declined: ") + approval.label, { id: approval.id, approve: approve });
    };
    for (const [text, approve] of [["Approve", true], ["Decline", false]]) {
      const button = el("button", "chip " + (approve ? "approve" : "decline"), text);
      button.type = "button";
      button.disabled = !onChoose;
      button.addEventListener("click", () => decide(approve));
      buttons.appendChild(button);
    }
    card.append(args, buttons);
    container.appendChild(card);
  }

  // ``onChoose`` is given only where a choice may still be made (the newest answer).
  function renderResult(container, result, onChoose) {
    container.innerHTML = "";
    if (result.assessment) container.appendChild(el("span", "badge " + result.assessment, result.assessment));
    for (const block of result.blocks || []) {
      if (block.type === "figure" && block.figure) renderFigure(container, block);
      else if (block.type === "choices" && block.choices) renderChoices(container, block.choices, onChoose);
      else if (block.type === "approval" && block.approval) renderApproval(container, block.approval, onChoose);
      else if (block.content) {
        const text = el("div", "text");
        text.innerHTML = QMarkdown.render(block.content);
        container.appendChild(text);
      }
      if (block.chart) renderChart(container, block.chart);
    }
  }

  function renderAssistantContent(container, content, onChoose) {
    if (content.startsWith("{")) {
      try {
        const parsed = JSON.parse(content);
        if (Array.isArray(parsed.blocks)) { renderResult(container, parsed, onChoose); return; }
      } catch (e) { /* plain text */ }
    }
    container.innerHTML = QMarkdown.render(content);
  }

  const STATES = { running: "Running", interrupted: "Interrupted", stopped: "Stopped" };

  // A turn that is still running, was cut by a crash or was stopped: a small badge on its message.
  function stateBadge(state) {
    return el("span", "turn-state " + state, STATES[state] || state);
  }

  function releaseFigures() {
    while (figureUrls.length) URL.revokeObjectURL(figureUrls.pop());
  }

  return { el, renderChart, renderFigure, renderResult, renderAssistantContent, stateBadge, releaseFigures };
})();

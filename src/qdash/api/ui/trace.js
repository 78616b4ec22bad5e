// The live trace of one answer from the extended stream (``?events=extended``): reasoning summaries,
// tool calls with their arguments, then duration, one-line result and figures; each model round's
// text. A collapsible <details> above the answer; the current round's text streams below it.
"use strict";

const QTrace = (() => {
  const el = (...args) => QRender.el(...args);

  function create(answer) {
    const details = el("details", "trace");
    details.hidden = true;
    const summary = el("summary", "", "Trace");
    const steps = el("ol", "steps");
    details.append(summary, steps);
    const live = el("div", "live text");
    answer.append(details, live);
    const counts = { tools: 0, errors: 0, reasoning: 0, ms: 0, tokens: 0 };
    let round = null;
    let text = "";

    function updateSummary() {
      const parts = [counts.tools + (counts.tools === 1 ? " tool call" : " tool calls")];
      if (counts.errors) parts.push(counts.errors + " failed");
      if (counts.reasoning) parts.push(counts.reasoning + " reasoning");
      if (counts.ms) parts.push(counts.ms + " ms in tools");
      if (counts.tokens) parts.push(counts.tokens.toLocaleString("en-US") + " tokens");
      summary.textContent = "Trace · " + parts.join(" · ");
    }

    function step(kind, roundNumber) {
      details.hidden = false;
      const li = el("li", "step " + kind);
      if (roundNumber) li.dataset.round = roundNumber;
      steps.appendChild(li);
      updateSummary();
      return li;
    }

    // A round's text before its tool calls is commentary: it moves into the trace, never the answer.
    function settleText() {
      if (text.trim()) {
        const li = step("text", round);
        li.append(el("span", "kind", "said"), el("span", "", text.trim()));
      }
      text = "";
      live.textContent = "";
    }

    function onTextDelta(data) {
      if (data.round !== round) { settleText(); round = data.round; }
      text += data.delta;
      // A structured (JSON) answer is shown when it is complete, not as raw JSON while it streams.
      live.textContent = text.trimStart().startsWith("{") ? "Writing the answer…" : text;
    }

    function onToolStart(data) {
      if (text.trim()) settleText();
      counts.tools += 1;
      const li = step("tool running", data.round);
      li.dataset.callId = data.call_id;
      li.append(el("code", "tool-name", data.tool), el("span", "label", data.label || ""));
      li.appendChild(el("pre", "arguments", JSON.stringify(data.arguments)));
    }

    function onToolResult(data) {
      const li = steps.querySelector('li[data-call-id="' + CSS.escape(data.call_id) + '"]') || step("tool", null);
      li.classList.remove("running");
      li.classList.add(data.is_error ? "failed" : "done");
      counts.errors += data.is_error ? 1 : 0;
      counts.ms += Math.round(data.duration_ms || 0);
      const figures = (data.figures || []).length;
      const outcome = el("div", "outcome");
      outcome.append(el("span", "duration", Math.round(data.duration_ms) + " ms"), el("span", "summary", data.summary));
      if (figures) outcome.appendChild(el("span", "figures", figures + (figures === 1 ? " figure" : " figures")));
      li.appendChild(outcome);
      updateSummary();
    }

    function onReasoning(data) {
      counts.reasoning += 1;
      const li = step("reasoning", data.round);
      li.append(el("span", "kind", "thinking"), el("span", "", data.text));
    }

    // True when the event belonged to the trace.
    function onEvent(name, data) {
      if (name === "text_delta") onTextDelta(data);
      else if (name === "tool_start") onToolStart(data);
      else if (name === "tool_result") onToolResult(data);
      else if (name === "reasoning") onReasoning(data);
      else if (name === "usage") { counts.tokens += (data.input_tokens || 0) + (data.output_tokens || 0); updateSummary(); }
      else return false;
      return true;
    }

    // The result replaces the streamed text; a stopped or failed turn keeps what was shown so far.
    function finish(keepText) {
      if (!keepText) { live.remove(); return; }
      if (!text.trim() || text.trimStart().startsWith("{")) live.remove();
      for (const li of steps.querySelectorAll("li.running")) li.classList.replace("running", "unfinished");
    }

    return { onEvent, finish };
  }

  return { create };
})();

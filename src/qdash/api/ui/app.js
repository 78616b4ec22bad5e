// The built-in chat page: streams a chat turn over the same SSE endpoint the dashboard uses,
// parsing frames by the dashboard's rules (split on "\n\n", "event: " sliced at 7, one data line).
"use strict";

const state = { sessionId: null, history: [], controller: null };
const $ = (id) => document.getElementById(id);

function token() { return localStorage.getItem("qdash.token") || ""; }
function project() { return localStorage.getItem("qdash.project") || ""; }

function headers(json) {
  const h = { Authorization: "Bearer " + token() };
  if (project()) h["X-Project-Id"] = project();
  if (json) h["Content-Type"] = "application/json";
  return h;
}

// The server's own words: its JSON ``detail`` (FastAPI errors), else the HTTP status.
async function errorDetail(response) {
  try {
    const body = await response.json();
    if (typeof body.detail === "string") return body.detail;
    if (Array.isArray(body.detail)) return body.detail.map((d) => d.msg).join("; ");
  } catch (e) { /* not JSON */ }
  return "HTTP " + response.status;
}

async function api(path, options) {
  const response = await fetch(path, Object.assign({ headers: headers(false) }, options || {}));
  if (!response.ok) throw new Error(await errorDetail(response));
  return response.json();
}

function newSessionId() {
  if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
  return "s-" + Date.now().toString(36) + Math.random().toString(36).slice(2);
}

function addMessage(kind) {
  const div = document.createElement("div");
  div.className = "msg " + kind;
  $("messages").appendChild(div);
  QWelcome.update();
  div.scrollIntoView({ block: "end" });
  return div;
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
  const div = document.createElement("div");
  div.className = "chart";
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

function renderResult(container, result) {
  container.innerHTML = "";
  if (result.assessment) {
    const badge = document.createElement("span");
    badge.className = "badge " + result.assessment;
    badge.textContent = result.assessment;
    container.appendChild(badge);
  }
  for (const block of result.blocks || []) {
    if (block.content) {
      const text = document.createElement("div");
      text.className = "text";
      text.innerHTML = QMarkdown.render(block.content);
      container.appendChild(text);
    }
    if (block.chart) renderChart(container, block.chart);
  }
}

function renderAssistantContent(container, content) {
  if (content.startsWith("{")) {
    try {
      const parsed = JSON.parse(content);
      if (Array.isArray(parsed.blocks)) { renderResult(container, parsed); return; }
    } catch (e) { /* plain text */ }
  }
  container.innerHTML = QMarkdown.render(content);
}

// Progress lines: one per tool call, ticked when its label appears in completed_tools.
function onStatus(status) {
  const progress = $("progress");
  if (status.step === "tool_call") {
    const line = document.createElement("div");
    line.className = "line running tool";
    line.dataset.label = status.message.replace(/\.\.\.$/, "");
    line.textContent = status.message;
    progress.appendChild(line);
  } else {
    let current = progress.querySelector(".current");
    if (!current) {
      current = document.createElement("div");
      current.className = "current";
      progress.prepend(current);
    }
    current.textContent = status.message;
  }
  for (const label of status.completed_tools || []) {
    for (const line of progress.querySelectorAll(".line.running")) {
      if (line.dataset.label === label) { line.className = "line done tool"; line.textContent = label; }
    }
  }
}

async function* sseEvents(response) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const frame = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let event = "";
      let data = "";
      for (const line of frame.split("\n")) {
        if (line.startsWith("event: ")) event = line.slice(7);
        else if (line.startsWith("data: ")) data = line.slice(6);
      }
      if (event && data) yield { event: event, data: JSON.parse(data) };
    }
  }
}

async function send(message) {
  if (state.controller) state.controller.abort();
  const controller = new AbortController();
  state.controller = controller;
  if (!state.sessionId) state.sessionId = newSessionId();
  addMessage("user").textContent = message;
  const answer = addMessage("assistant");
  answer.textContent = "…";
  $("progress").innerHTML = "";
  const body = { message: message, conversation_history: state.history.slice(), session_id: state.sessionId };
  state.history.push({ role: "user", content: message });
  try {
    const response = await fetch("/copilot/chat/stream", {
      method: "POST", headers: headers(true), body: JSON.stringify(body), signal: controller.signal,
    });
    if (!response.ok) throw new Error(await errorDetail(response));
    for await (const item of sseEvents(response)) {
      if (item.event === "status") onStatus(item.data);
      else if (item.event === "result") {
        renderResult(answer, item.data);
        state.history.push({ role: "assistant", content: JSON.stringify(item.data) });
      } else if (item.event === "error") {
        throw new Error(item.data.detail);
      }
    }
    loadSessions();
  } catch (e) {
    if (e.name === "AbortError") return;
    answer.className = "msg assistant error";
    answer.textContent = "Error: " + e.message;
    state.history.push({ role: "assistant", content: "Error: " + e.message });
  } finally {
    if (state.controller === controller) state.controller = null;
  }
}

async function loadSessions() {
  const list = $("sessions");
  try {
    const data = await api("/copilot/chat/sessions");
    list.innerHTML = "";
    for (const s of data.sessions) {
      const li = document.createElement("li");
      li.textContent = s.title + " (" + s.message_count + ")";
      li.dataset.sessionId = s.session_id;
      if (s.session_id === state.sessionId) li.className = "active";
      li.addEventListener("click", () => openSession(s.session_id));
      list.appendChild(li);
    }
  } catch (e) {
    $("auth-status").textContent = e.message;
  }
}

async function openSession(sessionId) {
  const session = await api("/copilot/chat/sessions/" + encodeURIComponent(sessionId));
  state.sessionId = session.session_id;
  state.history = [];
  $("messages").innerHTML = "";
  $("progress").innerHTML = "";
  for (const m of session.messages) {
    state.history.push({ role: m.role, content: m.content });
    const div = addMessage(m.role);
    if (m.role === "assistant") renderAssistantContent(div, m.content);
    else div.textContent = m.content;
  }
  loadSessions();
}

async function loadProjects() {
  const select = $("project");
  try {
    const data = await api("/copilot/projects");
    for (const p of data.projects) {
      const option = document.createElement("option");
      option.value = p.project_id;
      option.textContent = p.name + " (" + p.role + ")";
      select.appendChild(option);
    }
    if (!data.projects.some((p) => p.project_id === project())) {
      localStorage.setItem("qdash.project", data.current || (data.projects[0] || {}).project_id || "");
    }
    select.value = project();
    $("project-box").hidden = false;
    $("auth-status").textContent = "Signed in as " + data.username;
  } catch (e) {
    localStorage.removeItem("qdash.token"); // a reload must not retry the refused token
    $("auth-status").textContent = e.message;
    return;
  }
  loadSessions();
  api("/copilot/models").then((d) => QWelcome.showModels(d.models)).catch(() => {});
  api("/copilot/config").then((c) => QWelcome.showSuggestions(c, ask)).catch(() => {});
}

// Whatever the outcome of a sign-in, the previous user's conversation, sessions and projects go first.
function signIn(value) {
  newChat(false);
  $("sessions").innerHTML = "";
  $("project").innerHTML = "";
  $("project-box").hidden = true;
  $("auth-status").textContent = "";
  QWelcome.reset();
  localStorage.setItem("qdash.token", value.trim());
  localStorage.removeItem("qdash.project");
  loadProjects();
}

function newChat(reloadSessions) {
  if (state.controller) state.controller.abort();
  state.sessionId = null;
  state.history = [];
  $("messages").innerHTML = "";
  $("progress").innerHTML = "";
  QWelcome.update();
  if (reloadSessions !== false) loadSessions();
}

function ask(message) {
  $("input").value = "";
  send(message);
}

$("token").value = token();
$("signin").addEventListener("submit", (event) => {
  event.preventDefault();
  signIn($("token").value);
});
$("project").addEventListener("change", () => {
  localStorage.setItem("qdash.project", $("project").value);
  newChat();
});
$("new-chat").addEventListener("click", () => newChat());
$("composer").addEventListener("submit", (event) => {
  event.preventDefault();
  const message = $("input").value.trim();
  if (message) ask(message);
});
$("input").addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); $("composer").requestSubmit(); }
});
QWelcome.loadDemoUsers((demoToken) => { $("token").value = demoToken; signIn(demoToken); });
QWelcome.update();
if (token()) loadProjects();

// The built-in chat page: streams a chat turn over the dashboard's SSE endpoint with the extended
// trace (``?events=extended``), stops a running turn, lists and reopens sessions.
"use strict";

const state = { sessionId: null, history: [], controller: null, stopping: false };
const $ = (id) => document.getElementById(id);

function newSessionId() {
  if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
  return "s-" + Date.now().toString(36) + Math.random().toString(36).slice(2);
}

function addMessage(kind) {
  const div = QRender.el("div", "msg " + kind);
  $("messages").appendChild(div);
  QWelcome.update();
  div.scrollIntoView({ block: "end" });
  return div;
}

// Progress lines: one per tool call, ticked when its label appears in completed_tools.
function onStatus(status) {
  const progress = $("progress");
  if (status.step === "tool_call") {
    const line = QRender.el("div", "line running tool", status.message);
    line.dataset.label = status.message.replace(/\.\.\.$/, "");
    progress.appendChild(line);
  } else {
    let current = progress.querySelector(".current");
    if (!current) {
      current = QRender.el("div", "current");
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

// The conversation follows a streaming answer unless the reader has scrolled up to read.
function nearBottom() {
  const box = $("messages");
  return box.scrollHeight - box.scrollTop - box.clientHeight < 80;
}

function scrollToBottom() {
  const box = $("messages");
  box.scrollTop = box.scrollHeight;
}

function setRunning(running) {
  $("stop").hidden = !running;
  $("stop").disabled = false;
  state.stopping = false;
}

async function send(message, approval) {
  if (state.controller) state.controller.abort();
  const controller = new AbortController();
  state.controller = controller;
  if (!state.sessionId) state.sessionId = newSessionId();
  addMessage("user").textContent = message;
  const answer = addMessage("assistant");
  const trace = QTrace.create(answer);
  const body = QRender.el("div", "body", "…");
  answer.appendChild(body);
  $("progress").innerHTML = "";
  setRunning(true);
  const request = { message: message, conversation_history: state.history.slice(), session_id: state.sessionId };
  if (approval) request.approval = approval;
  state.history.push({ role: "user", content: message });
  try {
    const response = await fetch("/copilot/chat/stream?events=extended", {
      method: "POST", headers: QApi.headers(true), body: JSON.stringify(request), signal: controller.signal,
    });
    if (!response.ok) throw new Error(await QApi.errorDetail(response));
    for await (const item of QApi.sseEvents(response)) {
      const follow = nearBottom();
      if (trace.onEvent(item.event, item.data)) body.textContent = "";
      else if (item.event === "status") onStatus(item.data);
      else if (item.event === "result") {
        trace.finish(false);
        QRender.renderResult(body, item.data, ask);
        state.history.push({ role: "assistant", content: JSON.stringify(item.data) });
      } else if (item.event === "error") {
        trace.finish(true);
        if (item.data.code === "stopped") { showStopped(answer, body); return; }
        throw new Error(item.data.detail);
      }
      if (follow) scrollToBottom();
    }
  } catch (e) {
    if (e.name === "AbortError") {
      if (state.stopping && state.controller === controller) { trace.finish(true); showStopped(answer, body); }
      return;
    }
    trace.finish(true);
    answer.classList.add("error");
    body.textContent = "Error: " + e.message;
    state.history.push({ role: "assistant", content: "Error: " + e.message });
  } finally {
    if (state.controller === controller) { state.controller = null; setRunning(false); loadSessions(); }
  }
}

// A stopped turn keeps its trace and streamed text; the history gets an error-shaped answer, which
// the server leaves out of what the model sees (the session stores what was done so far).
function showStopped(answer, body) {
  body.textContent = "";
  answer.classList.add("stopped");
  answer.prepend(QRender.stateBadge("stopped"));
  $("progress").innerHTML = "";
  scrollToBottom();
  state.history.push({ role: "assistant", content: "Error: Stopped by the user" });
}

async function stop() {
  if (!state.controller || state.stopping) return;
  state.stopping = true;
  $("stop").disabled = true;
  try {
    await QApi.post("/copilot/chat/stop", { session_id: state.sessionId });
  } catch (e) {
    // Nothing of ours running on the server (yet): closing the stream cancels the run there too.
    if (state.controller) state.controller.abort();
  }
}

async function loadSessions() {
  const list = $("sessions");
  try {
    const data = await QApi.json("/copilot/chat/sessions");
    list.innerHTML = "";
    for (const s of data.sessions) {
      const li = QRender.el("li", s.session_id === state.sessionId ? "active" : "", s.title + " (" + s.message_count + ")");
      li.dataset.sessionId = s.session_id;
      li.addEventListener("click", () => openSession(s.session_id));
      list.appendChild(li);
    }
  } catch (e) {
    $("auth-status").textContent = e.message;
  }
}

async function openSession(sessionId) {
  const session = await QApi.json("/copilot/chat/sessions/" + encodeURIComponent(sessionId));
  clearConversation();
  state.sessionId = session.session_id;
  session.messages.forEach((m, i) => {
    state.history.push({ role: m.role, content: m.content });
    const div = addMessage(m.role);
    const last = i === session.messages.length - 1;
    if (m.role === "assistant") QRender.renderAssistantContent(div, m.content, last ? ask : null);
    else div.textContent = m.content;
    if (m.state) div.prepend(QRender.stateBadge(m.state));
  });
  loadSessions();
}

async function loadProjects() {
  const select = $("project");
  try {
    const data = await QApi.json("/copilot/projects");
    for (const p of data.projects) {
      const option = QRender.el("option", "", p.name + " (" + p.role + ")");
      option.value = p.project_id;
      select.appendChild(option);
    }
    if (!data.projects.some((p) => p.project_id === QApi.project())) {
      localStorage.setItem("qdash.project", data.current || (data.projects[0] || {}).project_id || "");
    }
    select.value = QApi.project();
    $("project-box").hidden = false;
    $("auth-status").textContent = "Signed in as " + data.username;
  } catch (e) {
    localStorage.removeItem("qdash.token"); // a reload must not retry the refused token
    $("auth-status").textContent = e.message;
    return;
  }
  loadSessions();
  QApi.json("/copilot/models").then((d) => QWelcome.showModels(d.models)).catch(() => {});
  QApi.json("/copilot/config").then((c) => QWelcome.showSuggestions(c, ask)).catch(() => {});
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
  loadProjects().then(QReviews.reset);
}

function clearConversation() {
  if (state.controller) state.controller.abort();
  state.sessionId = null;
  state.history = [];
  QRender.releaseFigures();
  $("messages").innerHTML = "";
  $("progress").innerHTML = "";
  QWelcome.update();
}

function newChat(reloadSessions) {
  clearConversation();
  if (reloadSessions !== false) loadSessions();
}

// ``approval``: the decision on a lab-action card, sent with its "Approved: …" message.
function ask(message, approval) {
  $("input").value = "";
  send(message, approval);
}

$("token").value = QApi.token();
$("signin").addEventListener("submit", (event) => {
  event.preventDefault();
  signIn($("token").value);
});
$("project").addEventListener("change", () => {
  localStorage.setItem("qdash.project", $("project").value);
  newChat();
  QReviews.reset();
});
$("new-chat").addEventListener("click", () => newChat());
$("stop").addEventListener("click", stop);
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
if (QApi.token()) loadProjects();

// What the page says before the first question: demo users to sign in with, the configured models
// (and how to add one when none answers), and the configured suggested questions.
"use strict";

const QWelcome = (() => {
  const $ = (id) => document.getElementById(id);

  function chip(text, onClick, title) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "chip";
    button.textContent = text;
    if (title) button.title = title;
    button.addEventListener("click", onClick);
    return button;
  }

  // Demo users are listed by the server only when it runs the demo lab (their tokens are public).
  async function loadDemoUsers(onPick) {
    let data = { demo_users: [] };
    try {
      const response = await fetch("/copilot/ui/welcome");
      if (response.ok) data = await response.json();
    } catch (e) { /* offline: no demo users */ }
    const box = $("demo-user-buttons");
    box.innerHTML = "";
    for (const user of data.demo_users) {
      box.appendChild(chip(user.username, () => onPick(user.token), "Sign in with " + user.token));
    }
    $("demo-users").hidden = data.demo_users.length === 0;
    $("welcome-demo").hidden = data.demo_users.length === 0;
  }

  function showModels(models) {
    const list = $("model-list");
    list.innerHTML = "";
    for (const m of models) {
      const li = document.createElement("li");
      li.className = m.reachable ? "ok" : "down";
      const label = m.provider === "demo" ? m.detail : m.name + (m.reachable ? "" : " — " + m.detail);
      li.textContent = m.alias + (m.default ? " (default)" : "") + ": " + label;
      list.appendChild(li);
    }
    $("models").hidden = false;
    $("model-help").hidden = models.some((m) => m.reachable);
  }

  function showSuggestions(config, onAsk) {
    const box = $("suggestions");
    box.innerHTML = "";
    for (const s of config.suggestions || []) box.appendChild(chip(s.prompt, () => onAsk(s.prompt), s.label));
    const ask = $("welcome-ask");
    ask.textContent = config.initial_message || "";
    ask.hidden = !config.initial_message;
    $("welcome-signin").hidden = true;
  }

  // Back to the signed-out state: nothing of the previous user stays on screen.
  function reset() {
    $("model-list").innerHTML = "";
    $("models").hidden = true;
    $("suggestions").innerHTML = "";
    $("welcome-ask").hidden = true;
    $("welcome-signin").hidden = false;
  }

  function update() {
    $("welcome").hidden = $("messages").children.length > 0;
  }

  return { loadDemoUsers, showModels, showSuggestions, reset, update };
})();

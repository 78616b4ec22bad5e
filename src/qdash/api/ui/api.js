// What every part of the page shares: the stored token and project, request headers, the server's
// error detail, JSON requests and the SSE frame reader (the dashboard's parsing rules).
"use strict";

const QApi = (() => {
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

  async function request(path, options) {
    const response = await fetch(path, Object.assign({ headers: headers(false) }, options || {}));
    if (!response.ok) throw new Error(await errorDetail(response));
    return response;
  }

  async function json(path, options) {
    return (await request(path, options)).json();
  }

  async function post(path, body) {
    return json(path, { method: "POST", headers: headers(true), body: JSON.stringify(body) });
  }

  // An authenticated image (run figures need the bearer token, which an <img src> cannot send).
  async function blobUrl(path) {
    return URL.createObjectURL(await (await request(path)).blob());
  }

  // Frames split on "\n\n", "event: " sliced at 7, one data line: exactly what the dashboard does.
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

  return { token, project, headers, errorDetail, json, post, blobUrl, sseEvents };
})();

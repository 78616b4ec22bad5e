// A small, safe markdown renderer for answer text blocks.
// Why our own: no build step and no CDN; the model's text is untrusted, so every character is
// HTML-escaped first and only the constructs below produce tags: headings, bold, italic, inline
// code, fenced code, bullet and numbered lists, GFM tables, paragraphs.
"use strict";

(function (global) {
  function escapeHtml(text) {
    return text
      .replace(/&/g, "&amp;")
      .replace(/</g, "&lt;")
      .replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;")
      .replace(/'/g, "&#39;");
  }

  // Inline markup on already-escaped text; code spans are cut out first so their content stays literal.
  function inline(escaped) {
    const codes = [];
    let out = escaped.replace(/`([^`]+)`/g, function (_, code) {
      codes.push("<code>" + code + "</code>");
      return "\u0000" + (codes.length - 1) + "\u0000";
    });
    out = out.replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>");
    out = out.replace(/__([^_]+)__/g, "<strong>$1</strong>");
    out = out.replace(/(^|[^*\w])\*([^*\s][^*]*)\*(?!\w)/g, "$1<em>$2</em>");
    return out.replace(/\u0000(\d+)\u0000/g, function (_, i) { return codes[Number(i)]; });
  }

  function splitRow(line) {
    let row = line.trim();
    if (row.startsWith("|")) row = row.slice(1);
    if (row.endsWith("|")) row = row.slice(0, -1);
    return row.split("|").map(function (cell) { return cell.trim(); });
  }

  function isTableSeparator(line) {
    return /^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$/.test(line) && line.indexOf("-") >= 0;
  }

  function table(lines) {
    const head = splitRow(lines[0]);
    const aligns = splitRow(lines[1]).map(function (cell) {
      if (cell.startsWith(":") && cell.endsWith(":")) return "center";
      if (cell.endsWith(":")) return "right";
      return "";
    });
    const cell = function (tag, text, i) {
      const align = aligns[i] ? ' style="text-align:' + aligns[i] + '"' : "";
      return "<" + tag + align + ">" + inline(text) + "</" + tag + ">";
    };
    let html = "<table><thead><tr>" + head.map(function (t, i) { return cell("th", t, i); }).join("") + "</tr></thead><tbody>";
    for (const line of lines.slice(2)) {
      const cells = splitRow(line);
      html += "<tr>" + head.map(function (_, i) { return cell("td", cells[i] || "", i); }).join("") + "</tr>";
    }
    return html + "</tbody></table>";
  }

  function render(source) {
    const lines = escapeHtml(String(source || "")).replace(/\r\n?/g, "\n").split("\n");
    const html = [];
    let i = 0;
    while (i < lines.length) {
      const line = lines[i];
      if (/^\s*```/.test(line)) {
        const body = [];
        i += 1;
        while (i < lines.length && !/^\s*```/.test(lines[i])) { body.push(lines[i]); i += 1; }
        i += 1;
        html.push("<pre><code>" + body.join("\n") + "</code></pre>");
        continue;
      }
      const heading = /^(#{1,6})\s+(.*)$/.exec(line);
      if (heading) {
        const level = heading[1].length;
        html.push("<h" + level + ">" + inline(heading[2]) + "</h" + level + ">");
        i += 1;
        continue;
      }
      if (line.indexOf("|") >= 0 && i + 1 < lines.length && isTableSeparator(lines[i + 1])) {
        const rows = [line, lines[i + 1]];
        i += 2;
        while (i < lines.length && lines[i].indexOf("|") >= 0 && lines[i].trim() !== "") { rows.push(lines[i]); i += 1; }
        html.push(table(rows));
        continue;
      }
      const bullet = /^\s*[-*+]\s+(.*)$/;
      const numbered = /^\s*\d+[.)]\s+(.*)$/;
      if (bullet.test(line) || numbered.test(line)) {
        const pattern = bullet.test(line) ? bullet : numbered;
        const tag = pattern === bullet ? "ul" : "ol";
        const items = [];
        while (i < lines.length && pattern.test(lines[i])) { items.push("<li>" + inline(pattern.exec(lines[i])[1]) + "</li>"); i += 1; }
        html.push("<" + tag + ">" + items.join("") + "</" + tag + ">");
        continue;
      }
      if (line.trim() === "") { i += 1; continue; }
      const para = [];
      while (i < lines.length && lines[i].trim() !== "" && !/^(#{1,6})\s/.test(lines[i]) && !/^\s*```/.test(lines[i]) &&
             !bullet.test(lines[i]) && !numbered.test(lines[i]) &&
             !(lines[i].indexOf("|") >= 0 && i + 1 < lines.length && isTableSeparator(lines[i + 1]))) {
        para.push(inline(lines[i]));
        i += 1;
      }
      html.push("<p>" + para.join("<br>") + "</p>");
    }
    return html.join("\n");
  }

  global.QMarkdown = { render: render, escapeHtml: escapeHtml };
})(window);

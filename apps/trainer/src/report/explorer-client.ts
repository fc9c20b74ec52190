// The trajectory explorer's page script and styles: plain DOM, text set as text (never as HTML),
// and a view's records parsed from their own inline JSON only when the view is opened.

export const EXPLORER_STYLE = `
#explorer { margin-top: 28px; } #explorer h2 { font-size: 18px; margin: 0 0 8px; }
.ex-controls { display: flex; flex-wrap: wrap; gap: 8px 12px; align-items: center; margin-bottom: 10px; }
.ex-controls select, .ex-controls input[type=search] { font: inherit; padding: 2px 4px; } .ex-keys { color: #6b7280; font-size: 12px; }
.ex-body { display: grid; grid-template-columns: 220px 1fr; gap: 12px; align-items: start; }
#ex-tasks { list-style: none; margin: 0; padding: 0; max-height: 80vh; overflow-y: auto; border: 1px solid #e5e7eb; border-radius: 6px; }
#ex-tasks li { padding: 3px 8px; cursor: pointer; border-bottom: 1px solid #f3f4f6; font-family: ui-monospace, monospace; font-size: 12px; }
#ex-tasks li.ex-selected { background: #dbeafe; } #ex-tasks li .ex-mark { float: right; }
#ex-detail { min-width: 0; } .ex-empty { color: #6b7280; }
.ex-columns { display: flex; gap: 10px; overflow-x: auto; align-items: flex-start; padding-bottom: 6px; }
.ex-rollout { flex: 0 0 360px; border: 1px solid #d1d5db; border-radius: 6px; padding: 6px; font-size: 12px; }
.ex-rollout.ex-current { outline: 3px solid #2563eb; } .ex-rollout.ex-masked { opacity: 0.45; background: #f3f4f6; }
.ex-head { font-weight: 600; margin-bottom: 4px; } .ex-sub { color: #4b5563; margin-bottom: 4px; }
.ex-turn { border-left: 4px solid #9ca3af; padding: 3px 6px; margin: 4px 0; white-space: pre-wrap; word-break: break-word; font-family: ui-monospace, monospace; }
.ex-turn .ex-role { font-family: system-ui, sans-serif; font-weight: 600; font-size: 11px; display: block; color: #374151; }
.ex-act { border-color: #2563eb; background: #eff6ff; } .ex-user { border-color: #16a34a; background: #f0fdf4; } .ex-system { border-color: #6b7280; background: #f9fafb; }
.ex-tool { border-color: #0891b2; background: #ecfeff; } .ex-imagined { border-color: #9333ea; background: #faf5ff; border-left-style: dashed; }
.ex-badge { display: inline-block; border-radius: 3px; padding: 0 4px; font-size: 10px; font-weight: 700; color: #fff; margin-left: 4px; }
.ex-badge.imagined { background: #9333ea; } .ex-badge.real { background: #0891b2; }
.ex-memory { background: #fefce8; border: 1px solid #fde68a; padding: 4px 6px; white-space: pre-wrap; margin: 4px 0; font-family: ui-monospace, monospace; }
.ex-checks li.pass { color: #166534; } .ex-checks li.fail { color: #991b1b; }
.ex-pred { width: 100%; border-collapse: collapse; margin: 6px 0 12px; font-size: 12px; } .ex-pred td, .ex-pred th { text-align: left; vertical-align: top; border: 1px solid #e5e7eb; }
.ex-pred pre { margin: 0; white-space: pre-wrap; word-break: break-word; } .ex-diff { background: #fee2e2; } .ex-agree { color: #166534; } .ex-disagree { color: #991b1b; font-weight: 600; }
`;

export const EXPLORER_CLIENT = String.raw`
(function () {
  "use strict";
  var index = JSON.parse(document.getElementById("explorer-index").textContent);
  var root = document.getElementById("explorer");
  if (!root || index.length === 0) return;
  var $ = function (id) { return document.getElementById(id); };
  var runSel = $("ex-run"), viewSel = $("ex-view"), settingSel = $("ex-setting"), statusSel = $("ex-status");
  var maskedBox = $("ex-masked"), parseBox = $("ex-parse"), search = $("ex-search"), list = $("ex-tasks"), detail = $("ex-detail");
  var state = { run: 0, view: -1, task: null, rollout: 0, shown: [] };
  var cache = {};

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text != null) node.textContent = text;
    return node;
  }
  function num(v) { return v == null ? "–" : String(Number(v.toFixed(3))); }
  function records(run, view) {
    var key = run + "-" + view;
    if (!cache[key]) cache[key] = JSON.parse(document.getElementById("kept-" + key).textContent);
    return cache[key];
  }
  function views() { return index[state.run].views; }
  function viewLabel(v) { return v.kind === "train" ? "step " + v.step : "evaluation @" + v.step + " · rehearsal " + v.setting; }

  function fillRuns() {
    index.forEach(function (run, i) { var o = el("option", null, run.name); o.value = String(i); runSel.appendChild(o); });
  }
  function fillViews() {
    viewSel.textContent = "";
    var settings = {};
    views().forEach(function (v) { if (v.kind === "eval") settings[v.setting] = true; });
    var current = settingSel.value;
    settingSel.textContent = "";
    ["all"].concat(Object.keys(settings).sort()).forEach(function (s) { var o = el("option", null, s === "all" ? "any rehearsal setting" : "rehearsal " + s); o.value = s; settingSel.appendChild(o); });
    settingSel.value = settings[current] ? current : "all";
    views().forEach(function (v, i) {
      if (v.kind === "eval" && settingSel.value !== "all" && v.setting !== settingSel.value) return;
      var o = el("option", null, viewLabel(v)); o.value = String(i); viewSel.appendChild(o);
    });
  }

  // Tool names and every text of a record, lower-cased, for the search box.
  function haystack(record) {
    var parts = [];
    function traj(t) {
      if (!t) return;
      t.context.forEach(function (m) { if (m.content) parts.push(m.content); });
      t.steps.forEach(function (s) {
        if (s.type === "user") { parts.push(s.message.content); (s.actions || []).forEach(function (a) { a.outcomes.forEach(outcome); }); return; }
        parts.push(s.generation.text);
        s.outcomes.forEach(outcome);
      });
    }
    function outcome(o) { parts.push(o.call.name, JSON.stringify(o.call.arguments), JSON.stringify(o.result)); }
    if (record.kind === "train") { traj(record.trajectory); if (record.memory) parts.push(record.memory); }
    else { traj(record.committed); record.attempts.forEach(function (a) { traj(a.trajectory); }); if (record.memory) parts.push(record.memory); }
    return parts.join("\n").toLowerCase();
  }
  function taskOf(record) { return record.kind === "train" ? record.trajectory.taskId : record.taskId; }

  function visibleTasks() {
    var v = views()[state.view];
    var status = statusSel.value, q = search.value.trim().toLowerCase();
    var hay = null;
    if (q) {
      hay = {};
      records(state.run, state.view).forEach(function (r) { var t = taskOf(r); hay[t] = (hay[t] || "") + haystack(r); });
    }
    return v.tasks.filter(function (t) {
      if (status === "succeeded" && !t.succeeded) return false;
      if (status === "failed" && !t.failed) return false;
      if (maskedBox.checked && !t.masked) return false;
      if (parseBox.checked && !t.parseErrors) return false;
      return !hay || hay[t.taskId].indexOf(q) >= 0;
    });
  }

  function renderList() {
    list.textContent = "";
    state.shown = visibleTasks();
    state.shown.forEach(function (t) {
      var li = el("li", t.taskId === state.task ? "ex-selected" : null, t.taskId);
      li.setAttribute("data-task", t.taskId);
      li.appendChild(el("span", "ex-mark", (t.succeeded ? "✓" : "") + (t.failed ? "✗" : "") + (t.masked ? " m" : "") + (t.parseErrors ? " !" : "")));
      li.addEventListener("click", function () { selectTask(t.taskId); });
      list.appendChild(li);
    });
    if (state.shown.length === 0) detail.replaceChildren(el("p", "ex-empty", "No task of this view matches the filters."));
  }

  function turn(cls, role, text) {
    var node = el("div", "ex-turn " + cls);
    node.appendChild(el("span", "ex-role", role));
    node.appendChild(document.createTextNode(text));
    return node;
  }
  function resultText(result) { return JSON.stringify(result.status === "ok" ? result.content : { error: result.error }, null, 2); }
  function outcomeNodes(o, box) {
    box.appendChild(turn("ex-act", "tool call", o.call.name + "(" + JSON.stringify(o.call.arguments) + ")"));
    var imagined = o.provenance === "rehearsed";
    var tokens = imagined && o.generation ? " · " + o.generation.outputTokens.length + " tokens" : "";
    var node = turn(imagined ? "ex-tool ex-imagined" : "ex-tool", (imagined ? "rehearse" : "environment") + " → " + o.call.name + tokens, resultText(o.result));
    var badge = el("span", "ex-badge " + (imagined ? "imagined" : "real"), imagined ? "imagined" : "real");
    node.firstChild.appendChild(badge);
    node.setAttribute("data-provenance", o.provenance);
    box.appendChild(node);
  }
  function trajectoryNodes(t, box) {
    t.context.forEach(function (m) {
      if (m.role === "system") { var d = el("details", "ex-turn ex-system"); d.appendChild(el("summary", null, "system prompt")); d.appendChild(document.createTextNode(m.content)); box.appendChild(d); }
      else box.appendChild(turn(m.role === "user" ? "ex-user" : "ex-act", m.role, m.content || ""));
    });
    t.steps.forEach(function (s) {
      if (s.type === "user") {
        (s.actions || []).forEach(function (a) { a.outcomes.forEach(function (o) { outcomeNodes(o, box); }); });
        box.appendChild(turn("ex-user", "user (" + s.source + ")", s.message.content));
        return;
      }
      box.appendChild(turn("ex-act", "act · " + s.generation.outputTokens.length + " tokens", s.generation.text));
      s.outcomes.forEach(function (o) { outcomeNodes(o, box); });
    });
    var end = t.termination;
    box.appendChild(el("div", "ex-sub", "ended: " + end.reason + (end.code ? " " + end.code : "") + (end.detail ? " (" + end.detail + ")" : "")));
  }
  function verdictNodes(verdict, box) {
    if (!verdict) return;
    if (verdict.status === "masked") { box.appendChild(el("div", "ex-sub", "masked: " + verdict.reason)); return; }
    box.appendChild(el("div", "ex-sub", "reward " + num(verdict.value)));
    var items = verdict.components ? Object.keys(verdict.components) : [];
    if (items.length === 0) return;
    var ul = el("ul", "ex-checks");
    items.forEach(function (k) { var v = verdict.components[k]; ul.appendChild(el("li", v >= 1 ? "pass" : "fail", (v >= 1 ? "✓ " : "✗ ") + k + ": " + num(v))); });
    box.appendChild(ul);
  }
  function column(title, cls) {
    var col = el("div", "ex-rollout" + (cls ? " " + cls : ""));
    col.appendChild(el("div", "ex-head", title));
    return col;
  }

  function renderTrain(rs, box) {
    var cols = el("div", "ex-columns");
    rs.sort(function (a, b) { return a.trajectory.rollout - b.trajectory.rollout; }).forEach(function (r) {
      var col = column("rollout " + r.trajectory.rollout, r.masked !== null ? "ex-masked" : null);
      col.setAttribute("data-rollout", String(r.trajectory.rollout));
      if (r.masked !== null) col.appendChild(el("div", "ex-sub", "masked: " + r.masked));
      verdictNodes(r.trajectory.reward, col);
      col.appendChild(el("div", "ex-sub", "advantage act " + num(r.advantage.act) + " · rehearse " + num(r.advantage.rehearse)));
      if (r.memory) col.appendChild(el("div", "ex-memory", "memory: " + r.memory));
      trajectoryNodes(r.trajectory, col);
      cols.appendChild(col);
    });
    box.appendChild(cols);
  }

  function diffPre(text, other) {
    var pre = el("pre");
    var theirs = {};
    other.split("\n").forEach(function (l) { theirs[l.trim().replace(/,$/, "")] = true; });
    text.split("\n").forEach(function (line) {
      pre.appendChild(el("span", theirs[line.trim().replace(/,$/, "")] ? null : "ex-diff", line + "\n"));
    });
    return pre;
  }
  function renderEval(r, box) {
    box.appendChild(el("div", "ex-sub", (r.success ? "succeeded" : "failed") + (r.error ? " · error: " + r.error : "")));
    verdictNodes(r.verdict, box);
    if (r.memory !== null) box.appendChild(el("div", "ex-memory", "memory the committed run acted on:\n" + r.memory));
    if (r.predictions.length > 0) {
      var table = el("table", "ex-pred");
      var head = el("tr");
      ["call", "real answer", "predicted by Rehearse (same history)", "agreement"].forEach(function (h) { head.appendChild(el("th", null, h)); });
      table.appendChild(head);
      r.predictions.forEach(function (p) {
        var tr = el("tr");
        tr.setAttribute("data-prediction", p.callId);
        tr.appendChild(el("td", null, p.tool + " (step " + p.step + ")"));
        var real = resultText(p.real), predicted = p.predicted ? resultText(p.predicted) : "(" + p.answer + ")";
        var a = el("td"); a.appendChild(diffPre(real, predicted)); tr.appendChild(a);
        var b = el("td"); b.appendChild(diffPre(predicted, real)); tr.appendChild(b);
        tr.appendChild(el("td", p.exact ? "ex-agree" : "ex-disagree", p.exact ? "exact" : (p.keys ? "same keys" : p.status ? "same status" : "differs")));
        table.appendChild(tr);
      });
      box.appendChild(table);
    }
    var cols = el("div", "ex-columns");
    r.attempts.forEach(function (a) {
      var col = column("rehearsed attempt " + a.index, "ex-attempt");
      col.setAttribute("data-rollout", "attempt-" + a.index);
      var s = a.assessment;
      col.appendChild(el("div", "ex-sub", "assessment (" + s.source + "): goal " + (s.reachedGoal === null ? "?" : s.reachedGoal ? "reached" : "missed") + (s.wentWrong ? " · wrong: " + s.wentWrong : "") + (s.revision ? " · revise: " + s.revision : "")));
      trajectoryNodes(a.trajectory, col);
      cols.appendChild(col);
    });
    if (r.committed) {
      var col = column("committed run (real environment)", "ex-committed");
      col.setAttribute("data-rollout", "committed");
      trajectoryNodes(r.committed, col);
      cols.appendChild(col);
    }
    box.appendChild(cols);
  }

  function renderDetail() {
    var v = views()[state.view];
    var rs = records(state.run, state.view).filter(function (r) { return taskOf(r) === state.task; });
    var box = el("div");
    box.appendChild(el("div", "ex-head", viewLabel(v) + " · task " + state.task));
    if (v.kind === "train") renderTrain(rs, box); else if (rs[0]) renderEval(rs[0], box);
    detail.replaceChildren(box);
    detail.setAttribute("data-view", v.id);
    detail.setAttribute("data-task", state.task);
    state.rollout = 0;
    markRollout();
  }
  function markRollout() {
    var cols = detail.querySelectorAll(".ex-rollout");
    cols.forEach(function (c, i) { c.classList.toggle("ex-current", i === state.rollout); });
    if (cols[state.rollout]) { cols[state.rollout].scrollIntoView({ block: "nearest", inline: "nearest" }); detail.setAttribute("data-rollout", cols[state.rollout].getAttribute("data-rollout")); }
  }
  function selectTask(taskId) {
    state.task = taskId;
    list.querySelectorAll("li").forEach(function (li) { li.classList.toggle("ex-selected", li.getAttribute("data-task") === taskId); });
    renderDetail();
  }
  function selectView(i, taskId) {
    state.view = i;
    viewSel.value = String(i);
    renderList();
    var first = taskId && state.shown.some(function (t) { return t.taskId === taskId; }) ? taskId : state.shown[0] && state.shown[0].taskId;
    if (first) selectTask(first);
  }
  function selectRun(i) { state.run = i; runSel.value = String(i); fillViews(); }

  // #explore=<run>/<view id>[/<task>]: the headline table links here.
  function route() {
    var m = /^#explore=(\d+)\/(train:\d+|eval:\d+:[^/]+)(?:\/(.*))?$/.exec(decodeURIComponent(location.hash));
    if (!m || !index[+m[1]]) return false;
    selectRun(+m[1]);
    var i = views().findIndex(function (v) { return v.id === m[2]; });
    if (i < 0) return false;
    if (v(i).kind === "eval" && settingSel.value !== "all" && settingSel.value !== v(i).setting) { settingSel.value = "all"; fillViews(); }
    selectView(i, m[3]);
    root.scrollIntoView();
    return true;
  }
  function v(i) { return views()[i]; }

  runSel.addEventListener("change", function () { selectRun(+runSel.value); if (viewSel.options[0]) selectView(+viewSel.options[0].value); });
  viewSel.addEventListener("change", function () { selectView(+viewSel.value, state.task); });
  settingSel.addEventListener("change", function () { fillViews(); var keep = Array.prototype.some.call(viewSel.options, function (o) { return +o.value === state.view; }); selectView(keep ? state.view : +viewSel.options[0].value, state.task); });
  [statusSel, maskedBox, parseBox].forEach(function (c) { c.addEventListener("change", function () { selectView(state.view, state.task); }); });
  search.addEventListener("input", function () { selectView(state.view, state.task); });
  window.addEventListener("hashchange", route);
  document.addEventListener("keydown", function (e) {
    var t = e.target.tagName;
    if (t === "INPUT" || t === "SELECT" || t === "TEXTAREA" || e.ctrlKey || e.metaKey || e.altKey) return;
    var at = state.shown.findIndex(function (x) { return x.taskId === state.task; });
    var cols = detail.querySelectorAll(".ex-rollout").length;
    if ((e.key === "j" || e.key === "ArrowDown") && at + 1 < state.shown.length) selectTask(state.shown[at + 1].taskId);
    else if ((e.key === "k" || e.key === "ArrowUp") && at > 0) selectTask(state.shown[at - 1].taskId);
    else if ((e.key === "l" || e.key === "ArrowRight") && state.rollout + 1 < cols) { state.rollout += 1; markRollout(); }
    else if ((e.key === "h" || e.key === "ArrowLeft") && state.rollout > 0) { state.rollout -= 1; markRollout(); }
    else return;
    e.preventDefault();
  });

  fillRuns();
  selectRun(0);
  if (!route()) {
    // Open on the last training step (else the last view).
    var last = -1;
    views().forEach(function (x, i) { if (x.kind === "train") last = i; });
    if (last < 0) last = views().length - 1;
    if (last >= 0) selectView(last);
  }
  document.body.setAttribute("data-explorer-ready", String(Math.round(performance.now())));
})();
`;

// Herald dashboard: the copy buttons beside shortened IDs, and the compose
// page's filter builder (below). Everything else works without script;
// without it the copy buttons stay hidden (the full ID is in the element's
// title and link) and a filter is typed as JSON.
"use strict";
document.documentElement.classList.add("js");
document.addEventListener("click", function (ev) {
  var b = ev.target.closest ? ev.target.closest("button.copy") : null;
  if (!b) return;
  ev.preventDefault();
  var text = b.getAttribute("data-copy");
  var done = function () {
    b.classList.add("copied");
    b.textContent = "Copied";
    setTimeout(function () { b.classList.remove("copied"); b.textContent = "Copy"; }, 1500);
  };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(text).then(done, function () { fallback(text); done(); });
  } else {
    fallback(text);
    done();
  }
});
function fallback(text) {
  var t = document.createElement("textarea");
  t.value = text;
  t.setAttribute("readonly", "");
  t.className = "offscreen";
  document.body.appendChild(t);
  t.select();
  try { document.execCommand("copy"); } catch (e) {}
  document.body.removeChild(t);
}

// The compose page's filter builder: conditions in rows, all or any of
// them, written as the filter's JSON into the textarea the form posts,
// and a live count of whom the filter (or the saved segment chosen)
// selects. Without script the JSON is typed by hand and the review counts.
// A filter the rows cannot show (nested and/or, not) stays JSON.
document.addEventListener("DOMContentLoaded", function () {
  var box = document.getElementById("filter-builder");
  if (!box) return;
  var form = box.closest("form");
  var area = document.getElementById("compose-filter");
  var segment = document.getElementById("compose-segment-id");
  var edit = document.getElementById("filter-edit");
  var out = document.getElementById("filter-count");
  var target = document.getElementById("target-segment");
  var subjects = [["tag", "tag"], ["platform", "platform"], ["locale", "language (locale)"], ["timeZone", "time zone"],
    ["appSourceVersion", "app version"], ["marketing", "marketing consent"], ["marketingNight", "night consent"],
    ["lastSeenDays", "days since last seen"], ["createdAt", "registered (date)"]];
  var ops = [["eq", "is"], ["ne", "is not"], ["in", "is one of"], ["exists", "is set"], ["prefix", "starts with"],
    ["gt", ">"], ["gte", "≥"], ["lt", "<"], ["lte", "≤"]];
  var fieldKind = { platform: "string", locale: "string", timeZone: "string", appSourceVersion: "string",
    marketing: "boolean", marketingNight: "boolean", lastSeenDays: "number", createdAt: "string" };

  function el(tag, attrs, kids) {
    var e = document.createElement(tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    (kids || []).forEach(function (c) { e.appendChild(typeof c === "string" ? document.createTextNode(c) : c); });
    return e;
  }
  function select(cls, label, options, value) {
    var s = el("select", { "class": cls, "aria-label": label });
    options.forEach(function (o) {
      var opt = el("option", { value: o[0] }, [o[1]]);
      if (o[0] === value) opt.selected = true;
      s.appendChild(opt);
    });
    return s;
  }

  var match = select("match", "Match", [["and", "all of these"], ["or", "any of these"]], "and");
  var rows = el("div", { "class": "builder-rows" });
  var add = el("button", { type: "button", "class": "plain", id: "add-condition" }, ["Add a condition"]);
  var note = el("p", { "class": "hint", id: "builder-note", hidden: "" }, ["This filter has more than the rows can show: edit its JSON below."]);
  box.appendChild(el("p", { "class": "builder-match" }, ["Users whose devices match ", match]));
  box.appendChild(rows);
  box.appendChild(add);
  box.appendChild(note);
  box.hidden = false;

  // addRow adds a condition's row: subject, tag name and kind (for a tag),
  // operator and value.
  function addRow(c) {
    c = c || { subject: "tag", name: "", kind: "string", op: "eq", value: "" };
    var row = el("div", { "class": "builder-row" });
    var subject = select("subject", "What the condition reads", subjects, c.subject);
    var name = el("input", { "class": "tag-name", "aria-label": "Tag name", placeholder: "tag name", maxlength: "64", value: c.name });
    var kind = select("kind", "Kind of the tag", [["string", "text"], ["number", "number"], ["boolean", "true/false"]], c.kind);
    var op = select("op", "Operator", ops, c.op);
    var value = el("input", { "class": "value", "aria-label": "Value", value: c.value });
    var remove = el("button", { type: "button", "class": "plain remove", "aria-label": "Remove the condition" }, ["Remove"]);
    [subject, name, kind, op, value, remove].forEach(function (e) { row.appendChild(e); });
    function shape() {
      var tag = subject.value === "tag";
      name.hidden = kind.hidden = !tag;
      value.placeholder = op.value === "exists" ? "yes or no" : op.value === "in" ? "values, separated by commas" : "value";
    }
    subject.addEventListener("change", shape);
    op.addEventListener("change", shape);
    remove.addEventListener("click", function () { rows.removeChild(row); write(); });
    shape();
    rows.appendChild(row);
    return row;
  }

  // typed is a value as the filter's JSON holds it: a number or a boolean
  // when its kind says so and it reads as one; else the text, which the
  // server refuses with a reason when it must not be text.
  function typed(kind, s) {
    s = s.trim();
    if (kind === "number" && s !== "" && !isNaN(Number(s))) return Number(s);
    if (kind === "boolean" && (s === "true" || s === "yes")) return true;
    if (kind === "boolean" && (s === "false" || s === "no")) return false;
    return s;
  }
  function leafOf(row) {
    var q = function (c) { return row.querySelector("." + c).value; };
    var subject = q("subject"), op = q("op"), v = q("value");
    var kind = subject === "tag" ? q("kind") : fieldKind[subject];
    var leaf = {};
    if (subject === "tag") leaf.tag = q("tag-name").trim(); else leaf.field = subject;
    if (op === "exists") leaf.exists = !/^(no|false)$/i.test(v.trim());
    else if (op === "in") leaf["in"] = v.split(",").map(function (s) { return typed(kind, s); }).filter(function (x) { return x !== ""; });
    else leaf[op] = typed(kind, v);
    return leaf;
  }
  // write puts the rows' filter in the textarea: one condition as it is,
  // several under and/or.
  function write() {
    var leaves = Array.prototype.map.call(rows.querySelectorAll(".builder-row"), leafOf);
    var f = leaves.length === 1 ? leaves[0] : leaves.length ? (function () { var o = {}; o[match.value] = leaves; return o; })() : null;
    area.value = f ? JSON.stringify(f) : "";
    recount();
  }

  // rowOf is the row of a leaf; null when the node is not a leaf.
  function rowOf(n) {
    if (!n || typeof n !== "object" || Array.isArray(n)) return null;
    var keys = Object.keys(n);
    var what = keys.filter(function (k) { return k === "tag" || k === "field"; });
    var op = keys.filter(function (k) { return ops.some(function (o) { return o[0] === k; }); });
    if (keys.length !== 2 || what.length !== 1 || op.length !== 1) return null;
    var v = n[op[0]], first = Array.isArray(v) ? v[0] : v;
    var kind = typeof first === "number" ? "number" : typeof first === "boolean" ? "boolean" : "string";
    var text = op[0] === "exists" ? (v ? "yes" : "no") : Array.isArray(v) ? v.join(", ") : String(v);
    return { subject: what[0] === "tag" ? "tag" : n.field, name: what[0] === "tag" ? n.tag : "", kind: kind, op: op[0], value: text };
  }
  // read shows the textarea's filter in the rows, when they can show it.
  function read() {
    var s = area.value.trim(), f = null, conds = null;
    if (s === "") conds = [];
    else {
      try { f = JSON.parse(s); } catch (e) { f = undefined; }
      var one = rowOf(f);
      if (one) conds = [one];
      else if (f && typeof f === "object" && !Array.isArray(f) && Object.keys(f).length === 1 && Array.isArray(f.and || f.or)) {
        match.value = f.and ? "and" : "or";
        conds = (f.and || f.or).map(rowOf);
        if (conds.some(function (c) { return !c; })) conds = null;
      }
    }
    rows.textContent = "";
    note.hidden = conds !== null;
    rows.hidden = add.hidden = match.parentNode.hidden = conds === null;
    (conds || []).forEach(addRow);
    if (conds && conds.length === 0) addRow();
  }

  var timer = null, asked = 0;
  // recount asks the server, a moment after the last change, whom the
  // filter or segment selects now.
  function recount() {
    clearTimeout(timer);
    edit.hidden = segment.value !== "";
    if (!target.checked) { out.textContent = ""; return; }
    timer = setTimeout(function () {
      var body = new URLSearchParams();
      body.set("csrf", form.querySelector("input[name=csrf]").value);
      if (segment.value !== "") body.set("segmentId", segment.value); else body.set("filter", area.value);
      if (segment.value === "" && area.value.trim() === "") { out.textContent = "Add a condition to count whom it selects."; return; }
      var n = ++asked;
      out.textContent = "Counting…";
      fetch(form.action.replace(/compose$/, "audience/count"), { method: "POST", body: body, credentials: "same-origin" })
        .then(function (r) { return r.json().then(function (j) { return { ok: r.ok, j: j }; }); })
        .then(function (a) {
          if (n !== asked) return;
          if (a.ok) {
            out.textContent = "Selects " + a.j.users + (a.j.users === 1 ? " user" : " users") + " (" + a.j.devices +
              (a.j.devices === 1 ? " device" : " devices") + ") now.";
            out.className = "";
            return;
          }
          var d = (a.j.details || []).map(function (x) { return x.field + " " + x.reason; }).join("; ");
          out.textContent = (a.j.message || "Could not count.") + (d ? " " + d : "");
          out.className = "warn";
        }, function () { if (n === asked) { out.textContent = "Could not count: the dashboard did not answer."; out.className = "warn"; } });
    }, 400);
  }

  add.addEventListener("click", function () { addRow().querySelector(".subject").focus(); write(); });
  box.addEventListener("change", function (ev) { if (ev.target !== match || rows.children.length) write(); });
  box.addEventListener("input", function (ev) { if (ev.target.tagName === "INPUT") write(); });
  area.addEventListener("input", function () { read(); recount(); });
  segment.addEventListener("change", recount);
  form.addEventListener("change", function (ev) { if (ev.target.name === "target") recount(); });
  read();
  recount();
});

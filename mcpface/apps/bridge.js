// The part of both views' scripts they share: the MCP Apps postMessage
// JSON-RPC client (view side), the host-context styling and two DOM helpers.
// apps.go puts it in place of the bridge marker of each document, so
// each served document stays self-contained.
// ---- MCP Apps postMessage JSON-RPC client (view side, protocol 2026-01-26) ----
function createBridge(appName, onNotify) {
  const pending = new Map();
  let nextID = 1;
  const post = (msg) => window.parent.postMessage(msg, "*");
  const requestHandlers = {
    "ping": () => ({}),
    "ui/resource-teardown": () => ({}),
  };
  window.addEventListener("message", (ev) => {
    if (ev.source !== window.parent) return; // only our host may talk to us
    const m = ev.data;
    if (!m || typeof m !== "object" || m.jsonrpc !== "2.0") return;
    if (typeof m.method === "string") {
      if (m.id === undefined) { onNotify(m.method, m.params || {}); return; }
      const h = requestHandlers[m.method];
      if (h) post({ jsonrpc: "2.0", id: m.id, result: h(m.params || {}) });
      else post({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "Method not found: " + m.method } });
      return;
    }
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (m.error) p.reject(new Error(m.error.message || "request failed")); else p.resolve(m.result);
  });
  // request sends a JSON-RPC request to the host; it rejects on an error
  // answer, or after 60 s without one (a config change waits for the new
  // catalog, which takes well under that).
  function request(method, params) {
    const id = nextID++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error("no answer from the host to " + method + " in 60 s"));
      }, 60000);
      pending.set(id, {
        resolve: (v) => { clearTimeout(timer); resolve(v); },
        reject: (e) => { clearTimeout(timer); reject(e); },
      });
      post({ jsonrpc: "2.0", id, method, params });
    });
  }
  function notify(method, params) { post({ jsonrpc: "2.0", method, params }); }
  async function start() {
    const res = await request("ui/initialize", {
      appInfo: { name: appName, version: "1.0.0" },
      appCapabilities: {},
      protocolVersion: "2026-01-26",
    });
    notify("ui/notifications/initialized", {});
    const report = () => notify("ui/notifications/size-changed", {
      height: Math.ceil(document.documentElement.getBoundingClientRect().height),
    });
    new ResizeObserver(report).observe(document.body);
    report();
    return res || {};
  }
  return { request, notify, start };
}

// Host context: theme, style variables, fonts, safe-area insets. Updates are partial.
function applyHostContext(ctx) {
  const root = document.documentElement;
  if (ctx.theme === "light" || ctx.theme === "dark") root.dataset.theme = ctx.theme;
  const styles = ctx.styles || {};
  for (const [k, v] of Object.entries(styles.variables || {})) {
    if (k.startsWith("--") && typeof v === "string") root.style.setProperty(k, v);
  }
  if (styles.css && typeof styles.css.fonts === "string") {
    let el = document.getElementById("host-fonts");
    if (!el) { el = document.createElement("style"); el.id = "host-fonts"; document.head.appendChild(el); }
    el.textContent = styles.css.fonts;
  }
  const ins = ctx.safeAreaInsets;
  if (ins) for (const side of ["top", "right", "bottom", "left"]) {
    if (typeof ins[side] === "number") root.style.setProperty("--inset-" + side, ins[side] + "px");
  }
}

// el builds a DOM element; text is always set as text, never parsed as HTML.
function el(tag, attrs, ...children) {
  const n = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) n.addEventListener(k.slice(2), v);
    else if (k === "class") n.className = v;
    else if (k === "text") n.textContent = v;
    else n.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children) if (c !== null && c !== undefined) n.append(c);
  return n;
}

function resultText(r) {
  const parts = ((r && r.content) || []).filter((c) => c && c.type === "text").map((c) => c.text);
  return parts.join("\n");
}


// The test host: the official MCP Apps host bridge (AppBridge of
// @modelcontextprotocol/ext-apps) wired to the skilljack-mcp binary through
// the Go test's /rpc endpoint. Bundled at test time by esbuild's Go API.
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

const q = new URLSearchParams(location.search);
const toolName = q.get("tool");
const sandboxURL = q.get("sandbox");
const innerSandbox = q.get("inner") || "allow-scripts";

// Host style variables for the two themes (a subset of the spec's keys).
const themes = {
  light: {
    "--color-background-primary": "#ffffff", "--color-background-secondary": "#f4f4f5",
    "--color-text-primary": "#18181b", "--color-text-secondary": "#52525b",
    "--color-border-primary": "#d4d4d8", "--color-text-info": "#1d4ed8",
    "--font-sans": "DejaVu Sans, sans-serif",
  },
  dark: {
    "--color-background-primary": "#18181b", "--color-background-secondary": "#27272a",
    "--color-text-primary": "#fafafa", "--color-text-secondary": "#a1a1aa",
    "--color-border-primary": "#3f3f46", "--color-text-info": "#93c5fd",
    "--font-sans": "DejaVu Sans, sans-serif",
  },
};
// vars=0: a host that sends only the theme, no style variables, so the view's
// own light and dark colours show.
const withVars = q.get("vars") !== "0";
const context = (theme) => ({
  theme, ...(withVars ? { styles: { variables: themes[theme] } } : {}), displayMode: "inline",
  availableDisplayModes: ["inline"], platform: "web", locale: "en-US",
  containerDimensions: { width: 760, maxHeight: 4000 },
});

const state = (window.hostState = { initialized: false, height: 0, appCalls: [], errors: [] });

async function rpc(method, params, from) {
  const r = await fetch("/rpc", { method: "POST", body: JSON.stringify({ method, params, from }) });
  const j = await r.json();
  if (j.error) {
    const e = new Error(j.error.message);
    e.code = j.error.code;
    throw e;
  }
  return j.result;
}

async function main() {
  const frame = document.getElementById("frame");
  const tools = (await rpc("tools/list", {})).tools;
  const tool = tools.find((t) => t.name === toolName);
  if (!tool) throw new Error("the server lists no tool " + toolName);
  const meta = tool._meta || {};
  const uri = (meta.ui && meta.ui.resourceUri) || meta["ui/resourceUri"];
  if (!uri) throw new Error(toolName + " names no ui resource");
  const [result, resource] = await Promise.all([
    rpc("tools/call", { name: toolName, arguments: {} }),
    rpc("resources/read", { uri }),
  ]);
  const content = resource.contents[0];
  state.resourceMimeType = content.mimeType;

  const bridge = new AppBridge(null, { name: "skilljack-test-host", version: "1.0.0" },
    { serverTools: {}, serverResources: {}, logging: {} },
    { hostContext: context(q.get("theme") || "light") });
  bridge.oncalltool = async (params) => {
    state.appCalls.push(params.name);
    return rpc("tools/call", params, "app");
  };
  bridge.onreadresource = (params) => rpc("resources/read", params, "app");
  bridge.addEventListener("sizechange", ({ height }) => {
    if (typeof height === "number" && height > 0) {
      state.height = height;
      frame.style.height = height + "px";
    }
  });
  bridge.addEventListener("sandboxready", () => {
    bridge.sendSandboxResourceReady({ html: content.text, sandbox: innerSandbox });
  });
  bridge.addEventListener("initialized", async () => {
    await bridge.sendToolInput({ arguments: {} });
    await bridge.sendToolResult(result);
    state.initialized = true;
  });
  window.setTheme = (theme) => bridge.setHostContext(context(theme));
  window.teardown = () => bridge.teardownResource({});
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  frame.src = sandboxURL;
}

main().catch((e) => {
  state.errors.push(String(e && e.stack || e));
  document.body.append(String(e));
});

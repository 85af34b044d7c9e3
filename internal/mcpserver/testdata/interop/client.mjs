// Interop client for Tidings' Go tests: connects with an official
// TypeScript MCP client, lists tools, calls get_status, prints one JSON line.
//
//   node client.mjs SDK TRANSPORT MODE TARGET [ARGS...]
//
// SDK: modern (@modelcontextprotocol/client 2.x) | legacy (@modelcontextprotocol/sdk 1.x)
// TRANSPORT: stdio (TARGET = command, ARGS = its arguments) | http | sse (TARGET = URL)
// MODE (modern only): legacy | auto | pin  (pin = 2026-07-28)
const [sdk, transport, mode, target, ...args] = process.argv.slice(2);

let Client, t;
if (sdk === 'modern') {
  const m = await import('@modelcontextprotocol/client');
  Client = m.Client;
  if (transport === 'stdio') {
    const s = await import('@modelcontextprotocol/client/stdio');
    t = new s.StdioClientTransport({ command: target, args, env: process.env, stderr: 'ignore' });
  } else if (transport === 'http') {
    t = new m.StreamableHTTPClientTransport(new URL(target));
  } else {
    t = new m.SSEClientTransport(new URL(target));
  }
} else {
  Client = (await import('@modelcontextprotocol/sdk/client/index.js')).Client;
  if (transport === 'stdio') {
    const s = await import('@modelcontextprotocol/sdk/client/stdio.js');
    t = new s.StdioClientTransport({ command: target, args, env: process.env, stderr: 'ignore' });
  } else if (transport === 'http') {
    const s = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    t = new s.StreamableHTTPClientTransport(new URL(target));
  } else {
    const s = await import('@modelcontextprotocol/sdk/client/sse.js');
    t = new s.SSEClientTransport(new URL(target));
  }
}

const opts = {};
if (sdk === 'modern' && mode !== 'legacy') {
  opts.versionNegotiation = { mode: mode === 'pin' ? { pin: '2026-07-28' } : 'auto' };
}
const client = new Client({ name: 'tidings-interop', version: '1.0.0' }, opts);
const timer = setTimeout(() => { console.error('timeout'); process.exit(3); }, 20000);
try {
  await client.connect(t);
  const tools = await client.listTools();
  const res = await client.callTool({ name: 'get_status', arguments: {} });
  const out = {
    negotiated: client.getNegotiatedProtocolVersion?.() ?? t.protocolVersion ?? null,
    era: client.getProtocolEra?.() ?? null,
    server: client.getServerVersion?.()?.name ?? null,
    tools: tools.tools.map((x) => x.name),
    annotations: tools.tools.find((x) => x.name === 'get_status')?.annotations ?? null,
    isError: res.isError ?? false,
    dataSet: res.structuredContent?.data_set ?? null,
    textBlocks: (res.content ?? []).filter((c) => c.type === 'text').length,
  };
  console.log(JSON.stringify(out));
  await client.close();
  clearTimeout(timer);
  process.exit(0);
} catch (e) {
  console.error(String(e?.stack ?? e));
  process.exit(2);
}

// Runs one real MCP client against a tool server that refuses it, and
// prints as JSON the messages the client reports:
//
//   node refusals.mjs v1|v2 <url> <bad key> <tool> <calls>
//
// badKey: connecting with a wrong key; limited: the error of the first
// call of <tool> past the caller's limits, out of <calls> calls made
// without a key.
const [which, url, badKey, tool, calls] = process.argv.slice(2);

async function connect(headers) {
  if (which === "v1") {
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
    const client = new Client({ name: "edge-test-ts-v1", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
    return client;
  }
  const { Client, StreamableHTTPClientTransport } = await import("@modelcontextprotocol/client");
  const client = new Client({ name: "edge-test-ts-v2", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

const out = { client: which };
try {
  const c = await connect({ Authorization: `Bearer ${badKey}` });
  await c.listTools();
  out.badKey = "connected";
} catch (e) {
  out.badKey = String(e?.message ?? e);
}
try {
  const c = await connect({});
  for (let i = 0; i < Number(calls); i++) {
    const r = await c.callTool({ name: tool, arguments: {} });
    if (r.isError) {
      out.limited = "tool error: " + JSON.stringify(r.content);
      break;
    }
  }
  out.limited ??= "never refused";
} catch (e) {
  out.limited = String(e?.message ?? e);
}
process.stdout.write(JSON.stringify(out));
process.exit(0);

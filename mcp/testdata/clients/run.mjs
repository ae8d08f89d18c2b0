// Runs one real MCP client against the tool server and prints what it saw
// as JSON: the tools it listed and the result of every call.
//
//   node run.mjs v1|v2 <url> <cases.json> [key]
//
// v1 is the TypeScript SDK v1 client (@modelcontextprotocol/sdk, protocol
// 2025-11-25); v2 is @modelcontextprotocol/client pinned to 2026-07-28.
// cases.json is [{"tool": name, "args": {...}}, ...]. Both clients validate
// each structured result against the tool's output schema.
import { readFileSync } from "node:fs";

const [which, url, casesFile, key] = process.argv.slice(2);
const cases = JSON.parse(readFileSync(casesFile, "utf8"));
const headers = key ? { Authorization: `Bearer ${key}` } : {};

let client, transport, protocolVersion;
if (which === "v1") {
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
  transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  client = new Client({ name: "edge-test-ts-v1", version: "1.0.0" });
  await client.connect(transport);
  protocolVersion = transport.protocolVersion;
} else if (which === "v2") {
  const { Client, StreamableHTTPClientTransport } = await import("@modelcontextprotocol/client");
  transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  client = new Client({ name: "edge-test-ts-v2", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
  await client.connect(transport);
  protocolVersion = client.getNegotiatedProtocolVersion?.() ?? transport.protocolVersion;
} else {
  throw new Error(`unknown client ${which}`);
}

const { tools } = await client.listTools();
const results = [];
for (const c of cases) {
  try {
    results.push(await client.callTool({ name: c.tool, arguments: c.args ?? {} }));
  } catch (e) {
    results.push({ protocolError: String(e?.message ?? e) });
  }
}
process.stdout.write(JSON.stringify({ client: which, protocolVersion, tools, results }));
await client.close();

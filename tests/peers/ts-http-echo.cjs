// ts-http-echo: the official TypeScript SDK's streamable HTTP server with one `echo` tool,
// written the way the SDK's README shows (McpServer + StreamableHTTPServerTransport on
// node:http), as a peer for `http-load`. It loads the SDK that scripts/setup-node.sh caches
// under $MCP_TOOLBELT_CACHE/npm.
//
//   node ts-http-echo.cjs PORT [--stateless]
//
// Prints `serving MCP over HTTP at URL` on stderr once listening.
const path = require("node:path");
const http = require("node:http");
const { randomUUID } = require("node:crypto");
const { createRequire } = require("node:module");

const cache = process.env.MCP_TOOLBELT_CACHE || path.join(__dirname, "..", "..", ".cache");
const npm = createRequire(path.join(cache, "npm", "package.json"));
const { McpServer } = npm("@modelcontextprotocol/sdk/server/mcp.js");
const { StreamableHTTPServerTransport } = npm("@modelcontextprotocol/sdk/server/streamableHttp.js");
const { isInitializeRequest } = npm("@modelcontextprotocol/sdk/types.js");
const { z } = npm("zod");

const port = Number(process.argv[2] || 0);
const stateless = process.argv.includes("--stateless");

function newServer() {
  const server = new McpServer({ name: "ts-http-echo", version: "1.0.0" });
  server.tool("echo", "Echo the message back unchanged", { message: z.string() }, async ({ message }) => ({
    content: [{ type: "text", text: message }],
  }));
  return server;
}

function readJson(req) {
  return new Promise((resolve) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      } catch {
        resolve(undefined);
      }
    });
  });
}

const sessions = new Map();

const httpServer = http.createServer(async (req, res) => {
  if (req.url !== "/mcp") {
    res.writeHead(404).end();
    return;
  }
  const body = req.method === "POST" ? await readJson(req) : undefined;
  if (stateless) {
    const server = newServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => {
      transport.close();
      server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
    return;
  }
  const id = req.headers["mcp-session-id"];
  let transport = id && sessions.get(id);
  if (!transport) {
    if (id || !isInitializeRequest(body)) {
      res.writeHead(400, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32000, message: "Bad Request: no valid session" } }));
      return;
    }
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => sessions.set(sid, transport),
    });
    transport.onclose = () => transport.sessionId && sessions.delete(transport.sessionId);
    await newServer().connect(transport);
  }
  await transport.handleRequest(req, res, body);
});

httpServer.listen(port, "127.0.0.1", () => {
  process.stderr.write(`serving MCP over HTTP at http://127.0.0.1:${httpServer.address().port}/mcp\n`);
});

// The third server of the HTTP load benchmark (go run ./bench/http): the
// TypeScript SDK's stateless Streamable HTTP server, written as the SDK's own
// example (examples/server/simpleStatelessStreamableHttp): createMcpExpressApp
// on 127.0.0.1 (its Host validation on), and for every POST a fresh McpServer
// and a StreamableHTTPServerTransport with sessionIdGenerator undefined, at
// the SDK's defaults (SSE answers). The tool is the Go servers' get_rrset:
// zod input and output schemas, structured content plus its JSON as text.
//
// Run: node server.mjs [port]   (0 or absent: a free port). Prints
// "READY <url>" on stdout once it listens.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import * as z from 'zod/v4';

const VALUE = '198.51.100.7';

function getServer() {
  const server = new McpServer({ name: 'bench-ts', version: 'v0' });
  server.registerTool(
    'get_rrset',
    {
      description: 'Get an RRSet.',
      inputSchema: { zone: z.string().describe('the zone'), name: z.string().describe('the name') },
      outputSchema: { zone: z.string(), name: z.string(), ttl: z.number(), value: z.string() },
    },
    async ({ zone, name }) => {
      const out = { zone, name, ttl: 300, value: VALUE };
      return { content: [{ type: 'text', text: JSON.stringify(out) }], structuredContent: out };
    },
  );
  return server;
}

const app = createMcpExpressApp();
app.post('/mcp', async (req, res) => {
  const server = getServer();
  try {
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
    res.on('close', () => {
      transport.close();
      server.close();
    });
  } catch (error) {
    console.error('handling an MCP request:', error);
    if (!res.headersSent) {
      res.status(500).json({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal server error' }, id: null });
    }
  }
});

const port = Number(process.argv[2] ?? 0);
const listener = app.listen(port, '127.0.0.1', (error) => {
  if (error) {
    console.error('listening:', error);
    process.exit(1);
  }
  console.log(`READY http://127.0.0.1:${listener.address().port}/mcp`);
});
process.on('SIGTERM', () => process.exit(0));
process.on('SIGINT', () => process.exit(0));

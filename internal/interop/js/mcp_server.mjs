// An MCP server made with the official TypeScript MCP SDK, for the interop
// tests of `parley serve --mcp` (internal/interop/jsmcp_test.go). Its tools
// cover each row of the mapping: text, an image and an embedded resource,
// structured content, isError, progress, elicitation and a call that waits
// until it is canceled.
//
//   node mcp_server.mjs         MCP over stdio
//   node mcp_server.mjs PORT    MCP over streamable HTTP at /mcp on
//                               127.0.0.1:PORT; prints "READY URL"
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const obj = (properties = {}, required = []) => ({ type: 'object', properties, required });
const tools = [
  { name: 'echo', title: 'Echo', description: 'Echoes the text.', inputSchema: obj({ text: { type: 'string' } }, ['text']) },
  { name: 'image', description: 'An image and an embedded resource.', inputSchema: obj() },
  { name: 'square', description: 'Squares n, with structured content.', inputSchema: obj({ n: { type: 'integer' } }, ['n']),
    outputSchema: obj({ n: { type: 'integer' }, square: { type: 'integer' } }, ['n', 'square']) },
  { name: 'fail', description: 'Fails with isError.', inputSchema: obj() },
  { name: 'progress', description: 'Reports progress steps times.', inputSchema: obj({ steps: { type: 'integer' } }) },
  { name: 'ask', description: 'Asks for a name, then greets it.', inputSchema: obj() },
  { name: 'slow', description: 'Waits until canceled (or a minute).', inputSchema: obj() },
  { name: 'canceled', description: 'How many slow calls were canceled.', inputSchema: obj() },
];
const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).toString('base64');
const text = (t) => ({ content: [{ type: 'text', text: t }] });
let canceled = 0;

function newServer() {
  const server = new Server({ name: 'ts-test-mcp', title: 'TypeScript test MCP server', version: '0.2.0' },
    { capabilities: { tools: {} }, instructions: 'Tools of the TypeScript SDK for Parley.' });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const args = req.params.arguments ?? {};
    switch (req.params.name) {
      case 'echo':
        return text('echo: ' + args.text);
      case 'image':
        return { content: [
          { type: 'image', data: png, mimeType: 'image/png' },
          { type: 'resource', resource: { uri: 'file:///notes.txt', mimeType: 'text/plain', text: 'some notes' } },
        ] };
      case 'square': {
        const out = { n: args.n, square: args.n * args.n };
        return { content: [{ type: 'text', text: JSON.stringify(out) }], structuredContent: out };
      }
      case 'fail':
        return { content: [{ type: 'text', text: 'it failed on purpose' }], isError: true };
      case 'progress': {
        const token = req.params._meta?.progressToken;
        for (let i = 1; i <= (args.steps ?? 1); i++) {
          if (token !== undefined) {
            await extra.sendNotification({ method: 'notifications/progress',
              params: { progressToken: token, progress: i, total: args.steps, message: `step ${i}` } });
          }
          await new Promise((r) => setTimeout(r, 20));
        }
        return text('done');
      }
      case 'ask': {
        const r = await server.elicitInput({ message: 'What is your name?',
          requestedSchema: obj({ name: { type: 'string' } }, ['name']) }, { relatedRequestId: extra.requestId });
        return text(r.action === 'accept' ? `hello ${r.content.name}` : `no name: ${r.action}`);
      }
      case 'slow':
        return await new Promise((resolve, reject) => {
          const timer = setTimeout(() => resolve(text('slept')), 60000);
          extra.signal.addEventListener('abort', () => { clearTimeout(timer); canceled++; reject(new Error('canceled')); });
        });
      case 'canceled':
        return text(String(canceled));
    }
    return { content: [{ type: 'text', text: 'unknown tool ' + req.params.name }], isError: true };
  });
  return server;
}

const port = process.argv[2];
if (!port) {
  await newServer().connect(new StdioServerTransport());
} else {
  const sessions = new Map();
  const httpServer = http.createServer(async (req, res) => {
    if (!req.url.startsWith('/mcp')) {
      res.writeHead(404).end();
      return;
    }
    let body;
    if (req.method === 'POST') {
      const chunks = [];
      for await (const c of req) chunks.push(c);
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    }
    let transport = sessions.get(req.headers['mcp-session-id']);
    if (!transport) {
      transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => sessions.set(id, transport) });
      await newServer().connect(transport);
    }
    await transport.handleRequest(req, res, body);
  });
  httpServer.listen(Number(port), '127.0.0.1', () => {
    console.log(`READY http://127.0.0.1:${port}/mcp`);
  });
}

// A v0.3-only A2A agent built with the official JS SDK's last v0.3 release
// (@a2a-js/sdk 0.3.14, installed under the alias a2a-sdk-03), Express
// integration: internal/interop/js03server_test.go drives Parley's Go client
// against it over v0.3 JSON-RPC and HTTP+JSON, and runs parley card and
// parley check on it.
//
// Usage: node server03.mjs PORT
//
// It listens on 127.0.0.1:PORT and serves
//   /.well-known/agent-card.json   a v0.3 card (url, preferredTransport,
//                                  additionalInterfaces, protocolVersion)
//   /a2a/jsonrpc                   the v0.3 JSON-RPC binding
//   /a2a/rest                      the v0.3 HTTP+JSON binding (/v1/...)
// then prints "READY http://127.0.0.1:PORT". It stops on SIGINT or SIGTERM.
//
// Behaviour, keyed on the message's first text part:
//   message          a direct Message reply "pong", no task
//   input-required   parks in input-required; a follow-up completes it
//   stream N         N chunks of artifact "stream", then completed
//   slow MS          working, waits MS ms (ends early when canceled)
//   anything else    artifact "echo" with the text, completed

import express from 'express';
import { randomUUID } from 'node:crypto';

import {
  DefaultRequestHandler, InMemoryPushNotificationStore, InMemoryTaskStore,
} from 'a2a-sdk-03/server';
import { UserBuilder, agentCardHandler, jsonRpcHandler, restHandler } from 'a2a-sdk-03/server/express';

const port = Number(process.argv[2]);
if (!Number.isInteger(port) || port <= 0 || port > 65535) {
  console.error('usage: node server03.mjs PORT');
  process.exit(2);
}
const base = `http://127.0.0.1:${port}`;

const card = {
  name: 'JS SDK 0.3 agent',
  description: 'A v0.3-only agent on the official A2A JS SDK 0.3: message, input-required, stream N, slow MS; anything else is echoed.',
  protocolVersion: '0.3.0',
  version: '1.0.0',
  url: `${base}/a2a/jsonrpc`,
  preferredTransport: 'JSONRPC',
  additionalInterfaces: [
    { url: `${base}/a2a/jsonrpc`, transport: 'JSONRPC' },
    { url: `${base}/a2a/rest`, transport: 'HTTP+JSON' },
  ],
  capabilities: { streaming: true, pushNotifications: true, stateTransitionHistory: false },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [{ id: 'echo', name: 'Echo', description: 'Repeats the text it receives.', tags: ['echo'] }],
};

const now = () => new Date().toISOString();
const text = (m) => (m.parts.find((p) => p.kind === 'text')?.text ?? '').trim();

class Executor {
  #waits = new Map();

  async execute(ctx, bus) {
    const { taskId, contextId, userMessage, task } = ctx;
    const words = text(userMessage).split(/\s+/);
    if (!task && words[0] === 'message') {
      bus.publish({ kind: 'message', messageId: randomUUID(), role: 'agent', parts: [{ kind: 'text', text: 'pong' }], contextId });
      bus.finished();
      return;
    }
    if (!task) {
      bus.publish({ kind: 'task', id: taskId, contextId, status: { state: 'submitted', timestamp: now() }, history: [userMessage] });
    }
    const status = (state, final) => bus.publish({ kind: 'status-update', taskId, contextId, status: { state, timestamp: now() }, final });
    const artifact = (artifactId, t, append, lastChunk) =>
      bus.publish({ kind: 'artifact-update', taskId, contextId, artifact: { artifactId, parts: [{ kind: 'text', text: t }] }, append, lastChunk });
    status('working', false);
    if (!task && words[0] === 'input-required') {
      status('input-required', true);
    } else if (!task && words[0] === 'stream') {
      const n = Number(words[1] ?? 3);
      for (let i = 0; i < n; i++) artifact('stream', `chunk ${i}`, i > 0, i === n - 1);
      status('completed', true);
    } else if (!task && words[0] === 'slow') {
      const canceled = await new Promise((resolve) => {
        const timer = setTimeout(() => resolve(false), Number(words[1] ?? 1000));
        this.#waits.set(taskId, () => { clearTimeout(timer); resolve(true); });
      });
      this.#waits.delete(taskId);
      if (!canceled) {
        artifact('echo', text(userMessage), false, true);
        status('completed', true);
      }
    } else {
      artifact('echo', text(userMessage), false, true);
      status('completed', true);
    }
    bus.finished();
  }

  async cancelTask(taskId, bus) {
    this.#waits.get(taskId)?.();
    bus.publish({ kind: 'status-update', taskId, contextId: '', status: { state: 'canceled', timestamp: now() }, final: true });
    bus.finished();
  }
}

const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), new Executor(), undefined, new InMemoryPushNotificationStore());
const app = express();
app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler }));
app.use('/a2a/jsonrpc', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
app.use('/a2a/rest', restHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
const server = app.listen(port, '127.0.0.1', () => console.log(`READY ${base}`));
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => server.close(() => process.exit(0)));

// An A2A server built with the official JS SDK (@a2a-js/sdk, Express
// integration) running the behaviour of Parley's conformance agent (see
// agents/agents.go): internal/interop/jsserver_test.go drives Parley's Go client
// against it over JSON-RPC and HTTP+JSON.
//
// Usage: node server_conformance.mjs PORT
//
// It listens on 127.0.0.1:PORT and serves
//   /.well-known/agent-card.json   the agent card
//   /a2a/jsonrpc                   the JSON-RPC binding
//   /a2a/rest                      the HTTP+JSON binding
// then prints one line "READY http://127.0.0.1:PORT" on stdout. It stops
// on SIGINT or SIGTERM.
//
// Behaviour, keyed on the first text part of the message (trimmed): the
// fourteen tck-* prefixes of ACTS's behaviour contract (ACTS §11.2), as
// Parley's acts agent carries them out, so that the official ACTS suite
// can grade the SDK's server (internal/interop/jsacts_test.go); and Parley's
// conformance agent's words:
//   message          a direct Message reply "pong", no task
//   input-required   parks in INPUT_REQUIRED; a follow-up on the task
//                    completes it with an artifact echoing the follow-up
//   auth-required    parks in AUTH_REQUIRED
//   reject, fail     ends REJECTED or FAILED with a status message
//   stream N         N chunks "chunk 0".."chunk N-1" of artifact "stream"
//                    (append from the second, lastChunk on the last), then
//                    COMPLETED
//   slow MS          WORKING, waits MS ms (ends early when canceled), then
//                    completes with the echo artifact
//   append-unknown   an append to an artifact never sent, then COMPLETED
//   anything else    WORKING, artifact "echo" with the text, COMPLETED
// A messageId starting with "test-resubscribe-message-id" acts as "slow 4000".

import express from 'express';
import { randomUUID } from 'node:crypto';

import { AGENT_CARD_PATH, Role, TaskState } from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryPushNotificationStore,
  InMemoryTaskStore,
} from '@a2a-js/sdk/server';
import {
  UserBuilder,
  agentCardHandler,
  jsonRpcHandler,
  restHandler,
} from '@a2a-js/sdk/server/express';

const port = Number(process.argv[2]);
if (!Number.isInteger(port) || port <= 0 || port > 65535) {
  console.error('usage: node server_conformance.mjs PORT');
  process.exit(2);
}
const base = `http://127.0.0.1:${port}`;

const card = {
  name: 'JS SDK conformance agent',
  description:
    "Parley's conformance agent behaviour on the official A2A JS SDK server: " +
    'message, input-required, auth-required, reject, fail, stream N, slow MS, append-unknown; anything else is echoed.',
  supportedInterfaces: [
    { url: `${base}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
    { url: `${base}/a2a/rest`, protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion: '1.0' },
  ],
  provider: { organization: 'Parley interop', url: 'https://parley.dev' },
  version: '1.0.0',
  documentationUrl: '',
  capabilities: { streaming: true, pushNotifications: true, extensions: [], extendedAgentCard: true },
  securitySchemes: {},
  securityRequirements: [],
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [
    {
      id: 'echo',
      name: 'Echo',
      description: 'Repeats the text it receives, or follows one of the test commands.',
      tags: ['echo', 'conformance', 'test'],
      examples: ['hello', 'stream 3', 'input-required', 'slow 2000'],
      inputModes: [],
      outputModes: [],
      securityRequirements: [],
    },
  ],
  signatures: [],
};

// The extended card, given to the SDK as a static card. The SDK hands it
// only to callers its UserBuilder marks authenticated, and every other
// caller gets the public card instead of an error: the deviation from
// §13.3 that jsserver_test.go pins.
const extendedCard = { ...card, name: `${card.name} (extended)` };

// Builders for the SDK's proto-shaped objects. Every field is set: the
// SDK's JSON encoder turns an undefined enum into "UNRECOGNIZED".
const textPart = (text) => ({
  content: { $case: 'text', value: text },
  metadata: undefined,
  filename: '',
  mediaType: 'text/plain',
});

const agentMessage = (text, taskId, contextId) => ({
  role: Role.ROLE_AGENT,
  messageId: randomUUID(),
  parts: [textPart(text)],
  taskId,
  contextId,
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});

const now = () => new Date().toISOString();

class ConformanceExecutor {
  // Waits of "slow" tasks, by task id, so that cancelTask can end them.
  #waits = new Map();
  // Context ids of the tasks seen, for the events cancelTask publishes.
  #contexts = new Map();

  async execute(ctx, bus) {
    const msg = ctx.userMessage;
    const { taskId, contextId } = ctx;
    const text = firstText(msg).trim();
    this.#contexts.set(taskId, contextId);

    const status = (state, message) =>
      bus.publish(
        AgentEvent.statusUpdate({ taskId, contextId, status: { state, message, timestamp: now() }, metadata: undefined }),
      );
    const artifact = (artifactId, chunk, append, lastChunk) =>
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: { artifactId, name: '', description: '', parts: Array.isArray(chunk) ? chunk : [textPart(chunk)], metadata: undefined, extensions: [] },
          append,
          lastChunk,
          metadata: undefined,
        }),
      );
    const echo = (t) => {
      status(TaskState.TASK_STATE_WORKING);
      artifact('echo', t, false, false);
      status(TaskState.TASK_STATE_COMPLETED);
    };

    // Every execution starts with the task (the SDK requires it, follow-ups
    // included) or with the one Message of a direct reply.
    const word = text.split(/\s+/, 1)[0];
    const tck = tckBehaviour(text, ctx.task);
    if (!ctx.task && (tck === 'tck-message-response' || (word === 'message' && !msg.messageId.startsWith('test-resubscribe-message-id')))) {
      const reply = tck ? 'Direct message response' : 'pong';
      bus.publish(AgentEvent.message(agentMessage(reply, '', contextId)));
      return;
    }
    if (tck) {
      bus.publish(AgentEvent.task(ctx.task ?? {
        id: taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: now() },
        artifacts: [],
        history: [msg],
        metadata: undefined,
      }));
      return this.#tck(tck, text, taskId, contextId, status, artifact);
    }
    if (ctx.task) {
      bus.publish(AgentEvent.task(ctx.task));
      if (ctx.task.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED) {
        echo(text); // the follow-up the task asked for
        return;
      }
    } else {
      bus.publish(
        AgentEvent.task({
          id: taskId,
          contextId,
          status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: now() },
          artifacts: [],
          history: [msg],
          metadata: undefined,
        }),
      );
    }

    if (msg.messageId.startsWith('test-resubscribe-message-id')) {
      return this.#slow(taskId, status, artifact, text, 4000);
    }
    const arg = text.slice(word.length).trim();
    switch (word) {
      case 'input-required':
        status(TaskState.TASK_STATE_INPUT_REQUIRED,
          agentMessage('more input is required: send a follow-up message on this task', taskId, contextId));
        return;
      case 'auth-required':
        status(TaskState.TASK_STATE_AUTH_REQUIRED, agentMessage('authorization is required to continue', taskId, contextId));
        return;
      case 'reject':
        status(TaskState.TASK_STATE_REJECTED, agentMessage('the agent rejected the task', taskId, contextId));
        return;
      case 'fail':
        status(TaskState.TASK_STATE_FAILED, agentMessage('the agent failed the task on request', taskId, contextId));
        return;
      case 'stream': {
        const n = Number(arg);
        if (!Number.isInteger(n) || n < 0 || arg === '') break;
        status(TaskState.TASK_STATE_WORKING);
        for (let i = 0; i < n; i++) {
          artifact('stream', `chunk ${i}`, i > 0, i === n - 1);
        }
        status(TaskState.TASK_STATE_COMPLETED);
        return;
      }
      case 'slow': {
        const ms = Number(arg);
        if (!Number.isInteger(ms) || ms < 0 || arg === '') break;
        return this.#slow(taskId, status, artifact, text, ms);
      }
      case 'append-unknown':
        status(TaskState.TASK_STATE_WORKING);
        artifact('never-sent', 'appended', true, true);
        status(TaskState.TASK_STATE_COMPLETED);
        return;
    }
    echo(text);
  }

  // #wait waits ms milliseconds (for ever when ms is Infinity), or until
  // the task is canceled; it says whether it was.
  async #wait(taskId, ms) {
    const canceled = await new Promise((resolve) => {
      const timer = ms === Infinity ? undefined : setTimeout(() => resolve(false), ms);
      this.#waits.set(taskId, () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    this.#waits.delete(taskId);
    return canceled;
  }

  // #tck carries out one behaviour of the ACTS contract (the task already
  // published), as Parley's acts agent does (internal/agents/acts.go).
  async #tck(name, text, taskId, contextId, status, artifact) {
    const say = (state, t) => status(state, agentMessage(t, taskId, contextId));
    const part = (p) => ({ metadata: undefined, filename: '', mediaType: '', ...p });
    const complete = (artifactId, parts) => {
      bus(artifactId, parts);
      status(TaskState.TASK_STATE_COMPLETED);
    };
    const bus = (artifactId, parts) => artifact(artifactId, parts, false, false);
    switch (name) {
      case 'tck-complete-task':
        return say(TaskState.TASK_STATE_COMPLETED, 'Hello from TCK');
      case 'tck-input-required':
        return say(TaskState.TASK_STATE_INPUT_REQUIRED, 'Input required');
      case 'tck-auth-required':
        return say(TaskState.TASK_STATE_AUTH_REQUIRED, 'Authorization required');
      case 'tck-reject-task':
        return say(TaskState.TASK_STATE_REJECTED, 'rejected');
      case 'tck-task-failure':
        return say(TaskState.TASK_STATE_FAILED, 'The task failed, as tck-task-failure asks');
      case 'tck-artifact-text':
        return complete('text', [textPart('Generated text content')]);
      case 'tck-artifact-file':
        return complete('file', [part({ content: { $case: 'raw', value: new TextEncoder().encode('tck') }, filename: 'output.txt', mediaType: 'text/plain' })]);
      case 'tck-artifact-file-url':
        return complete('file-url', [part({ content: { $case: 'url', value: 'https://example.com/output.txt' }, filename: 'output.txt', mediaType: 'text/plain' })]);
      case 'tck-artifact-data':
        return complete('data', [part({ content: { $case: 'data', value: { key: 'value', count: 42 } } })]);
      case 'tck-stream-basic':
        status(TaskState.TASK_STATE_WORKING);
        return complete('stream', [textPart('Streamed content')]);
      case 'tck-stream-chunked':
        status(TaskState.TASK_STATE_WORKING);
        artifact('chunked', [textPart('chunk-1 ')], false, false);
        artifact('chunked', [textPart('chunk-2')], true, true);
        return status(TaskState.TASK_STATE_COMPLETED);
      case 'tck-multi-turn':
        if (text !== '' && !text.startsWith('tck-') && text.split(/\s+/, 1)[0].toLowerCase() === 'done') {
          return say(TaskState.TASK_STATE_COMPLETED, 'Conversation complete');
        }
        return status(TaskState.TASK_STATE_INPUT_REQUIRED);
      case 'tck-cancel':
        status(TaskState.TASK_STATE_WORKING);
        await this.#wait(taskId, Infinity);
        return; // cancelTask published CANCELED
      case 'tck-long-running':
        status(TaskState.TASK_STATE_WORKING);
        if (await this.#wait(taskId, 2000)) return;
        bus('result', [textPart('Long-running work done')]);
        return say(TaskState.TASK_STATE_COMPLETED, 'Long-running work done');
      default: // tck-message-response on a task that exists: the task ends
        return say(TaskState.TASK_STATE_COMPLETED, 'Direct message response');
    }
  }

  async #slow(taskId, status, artifact, text, ms) {
    status(TaskState.TASK_STATE_WORKING);
    if (await this.#wait(taskId, ms)) return; // cancelTask already published CANCELED
    artifact('echo', text, false, false);
    status(TaskState.TASK_STATE_COMPLETED);
  }

  async cancelTask(taskId, bus) {
    const contextId = this.#contexts.get(taskId) ?? '';
    this.#waits.get(taskId)?.();
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: {
          state: TaskState.TASK_STATE_CANCELED,
          message: agentMessage('the task was canceled', taskId, contextId),
          timestamp: now(),
        },
        metadata: undefined,
      }),
    );
  }
}

// The behaviours of the ACTS contract (ACTS §11.2, and tck-auth-required,
// which its suite uses), longest first so that a prefix of another never
// wins.
const tckPrefixes = [
  'tck-complete-task', 'tck-input-required', 'tck-auth-required', 'tck-reject-task', 'tck-message-response',
  'tck-artifact-text', 'tck-artifact-file', 'tck-artifact-file-url', 'tck-artifact-data', 'tck-long-running',
  'tck-multi-turn', 'tck-cancel', 'tck-stream-basic', 'tck-stream-chunked', 'tck-task-failure',
].sort((a, b) => b.length - a.length);

// tckBehaviour is the ACTS behaviour a message asks for: the prefix its
// text starts with, or on a follow-up the one the task's first user
// message named; undefined when neither names one.
function tckBehaviour(text, task) {
  const of = (t) => tckPrefixes.find((p) => t.startsWith(p));
  if (of(text)) return of(text);
  const first = task?.history?.find((m) => m.role === Role.ROLE_USER);
  return first ? of(firstText(first).trim()) : undefined;
}

function firstText(msg) {
  for (const p of msg?.parts ?? []) {
    if (p.content?.$case === 'text') return p.content.value;
  }
  return '';
}

// Push configurations are stored, and nothing is ever delivered: a test
// server sends no traffic anywhere.
const noDelivery = { send: async () => {} };

const requestHandler = new DefaultRequestHandler(
  card,
  new InMemoryTaskStore(),
  new ConformanceExecutor(),
  undefined, // the default event bus manager
  new InMemoryPushNotificationStore(),
  noDelivery,
  extendedCard,
);

const app = express();
app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: requestHandler }));
app.use('/a2a/jsonrpc', jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
app.use('/a2a/rest', restHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));

const server = app.listen(port, '127.0.0.1', (err) => {
  if (err) {
    console.error(`listen on ${base}: ${err.message}`);
    process.exit(1);
  }
  console.log(`READY ${base}`);
});
server.on('error', (err) => {
  console.error(`listen on ${base}: ${err.message}`);
  process.exit(1);
});

for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    server.close();
    server.closeAllConnections?.();
    process.exit(0);
  });
}

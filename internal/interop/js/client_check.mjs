// Interoperability check: drives a Parley server (conformance agent) with the
// official A2A JavaScript SDK client (@a2a-js/sdk 1.3.0).
//
// Usage: node client_check.mjs BASE_URL BINDING
//   BASE_URL  e.g. http://127.0.0.1:8080 (the agent card is fetched from
//             BASE_URL/.well-known/agent-card.json by the SDK itself)
//   BINDING   JSONRPC or HTTP+JSON
//
// Prints one line per check ("PASS name" or "FAIL name: why") and exits 1 if
// any check failed. A watchdog bounds the whole run so it never hangs.

import { randomUUID } from 'node:crypto';
import { Role, TaskState, taskStateToJSON } from '@a2a-js/sdk';
import { ClientFactory, JsonRpcTransportFactory, RestTransportFactory } from '@a2a-js/sdk/client';
import { A2AError, TaskNotFoundError } from '@a2a-js/sdk/errors';
import {
  CALL_TIMEOUT_MS, CheckError, KNOWN_STATES, TERMINAL, check, describe, drain, ensure, errText, isMessage,
  nextWithin, opts, run, same, sameState, stateName, textsOf, userMessage,
} from './checklib.mjs';

const RUN_TIMEOUT_MS = 28_000; // whole script

const [baseUrl, binding] = process.argv.slice(2);
if (!baseUrl || !['JSONRPC', 'HTTP+JSON'].includes(binding)) {
  process.stderr.write('usage: node client_check.mjs BASE_URL JSONRPC|HTTP+JSON\n');
  process.exit(2);
}


// ---------- request builders (full objects: the SDK's toJSON serialises enums of missing fields as "UNRECOGNIZED") ----------

function sendRequest(text, configuration = {}) {
  return { tenant: '', message: userMessage(text), configuration, metadata: undefined };
}

// ---------- the run ----------

const created = {}; // ids of tasks created by this run

async function main() {
  const factory = new ClientFactory({
    transports: [binding === 'JSONRPC' ? new JsonRpcTransportFactory() : new RestTransportFactory()],
    preferredTransports: [binding],
  });

  let client;
  await check('agent_card', async () => {
    client = await factory.createFromUrl(baseUrl);
    same(client.transport.protocolName, binding, 'selected transport');
    same(client.protocolVersion, '1.0', 'client protocol version');
    const card = await client.getAgentCard(opts());
    ensure(card.capabilities?.streaming === true, 'card capabilities.streaming is not true');
    const iface = (card.supportedInterfaces ?? []).find((i) => i.protocolBinding === binding);
    ensure(iface, `card has no ${binding} interface`);
    same(iface.protocolVersion, '1.0', `${binding} interface protocolVersion`);
  });
  if (!client) return;

  await check('send_message_blocking', async () => {
    const res = await client.sendMessage(sendRequest('hello'), opts());
    ensure(!isMessage(res), `expected a Task, got a Message: ${JSON.stringify(res)}`);
    ensure(typeof res.id === 'string' && res.id !== '', 'task id is empty');
    ensure(typeof res.contextId === 'string' && res.contextId !== '', 'task contextId is empty');
    sameState(res.status?.state, TaskState.TASK_STATE_COMPLETED, 'task state');
    same(res.artifacts.length, 1, 'artifact count');
    same(res.artifacts[0].artifactId, 'echo', 'artifactId');
    same(JSON.stringify(textsOf(res.artifacts[0].parts)), JSON.stringify(['hello']), 'artifact parts');
    created.hello = res.id;
  });

  await check('send_message_direct_reply', async () => {
    const res = await client.sendMessage(sendRequest('message'), opts());
    ensure(isMessage(res), `expected a Message, got: ${JSON.stringify(res)}`);
    ensure(res.messageId !== '', 'reply messageId is empty');
    same(res.role, Role.ROLE_AGENT, 'reply role');
    same(JSON.stringify(textsOf(res.parts)), JSON.stringify(['pong']), 'reply parts');
  });

  await check('send_streaming_message', async () => {
    const it = client.sendMessageStream(sendRequest('stream 3'), opts())[Symbol.asyncIterator]();
    const events = await drain(it, CALL_TIMEOUT_MS, 'stream');
    const seq = events.map(describe).join(', ');
    ensure(events.length >= 5, `too few events: ${seq}`);

    const first = events[0].payload;
    same(first?.$case, 'task', `first event kind (sequence: ${seq})`);
    const id = first.value.id;
    ensure(id !== '', 'streamed task id is empty');
    ensure(!TERMINAL.has(first.value.status?.state), `first task snapshot already terminal: ${stateName(first.value.status?.state)}`);

    const last = events[events.length - 1].payload;
    same(last?.$case, 'statusUpdate', `last event kind (sequence: ${seq})`);
    sameState(last.value.status?.state, TaskState.TASK_STATE_COMPLETED, 'final status');
    same(last.value.taskId, id, 'final status taskId');

    const middle = events.slice(1, -1).map((e) => e.payload);
    const chunks = [];
    for (const p of middle) {
      if (p?.$case === 'artifactUpdate') {
        same(p.value.taskId, id, 'artifact update taskId');
        chunks.push(p.value);
      } else if (p?.$case === 'statusUpdate') {
        ensure(!TERMINAL.has(p.value.status?.state), `terminal status before the end: ${seq}`);
      } else {
        throw new CheckError(`unexpected event in the middle of the stream: ${seq}`);
      }
    }
    same(chunks.length, 3, `artifact update count (sequence: ${seq})`);
    chunks.forEach((c, i) => {
      same(c.artifact?.artifactId, 'stream', `chunk ${i} artifactId`);
      same(JSON.stringify(textsOf(c.artifact?.parts)), JSON.stringify([`chunk ${i}`]), `chunk ${i} parts`);
      same(c.append, i > 0, `chunk ${i} append`);
      same(c.lastChunk, i === 2, `chunk ${i} lastChunk`);
    });
    created.stream = id;
  });

  await check('get_task', async () => {
    ensure(created.hello, 'no task from send_message_blocking to fetch');
    const t = await client.getTask({ tenant: '', id: created.hello, historyLength: 0 }, opts());
    same(t.id, created.hello, 'task id');
    sameState(t.status?.state, TaskState.TASK_STATE_COMPLETED, 'task state');
    same(t.history.length, 0, 'history length with historyLength=0');
    same(t.artifacts.length, 1, 'artifact count');
    same(JSON.stringify(textsOf(t.artifacts[0].parts)), JSON.stringify(['hello']), 'artifact parts');
  });

  await check('list_tasks', async () => {
    ensure(created.hello && created.stream, 'tasks from earlier checks are missing');
    const res = await client.listTasks(
      { tenant: '', contextId: '', status: TaskState.TASK_STATE_UNSPECIFIED, pageToken: '' },
      opts(),
    );
    const ids = res.tasks.map((t) => t.id);
    const iHello = ids.indexOf(created.hello);
    const iStream = ids.indexOf(created.stream);
    ensure(iHello >= 0, `blocking task ${created.hello} not listed`);
    ensure(iStream >= 0, `streamed task ${created.stream} not listed`);
    ensure(iStream < iHello, 'not most-recent-first: the streamed task (newer) is listed after the blocking one');
    for (const t of res.tasks) {
      ensure(t.id !== '', 'a listed task has an empty id');
      ensure(KNOWN_STATES.has(t.status?.state), `task ${t.id} has state ${stateName(t.status?.state)}`);
    }
    const stamps = res.tasks.map((t) => t.status?.timestamp);
    for (let i = 1; i < stamps.length; i++) {
      if (stamps[i - 1] && stamps[i]) {
        ensure(Date.parse(stamps[i - 1]) >= Date.parse(stamps[i]), `not sorted by status timestamp desc at index ${i}: ${stamps[i - 1]} < ${stamps[i]}`);
      }
    }
    same(res.nextPageToken, '', 'nextPageToken');
  });

  await check('cancel_with_subscription', async () => {
    const res = await client.sendMessage(sendRequest('slow 3000', { returnImmediately: true }), opts());
    ensure(!isMessage(res), 'expected a Task from a non-blocking send');
    ensure(res.id !== '', 'task id is empty');
    ensure(!TERMINAL.has(res.status?.state), `non-blocking send returned terminal state ${stateName(res.status?.state)}`);
    const id = res.id;

    const it = client.resubscribeTask({ tenant: '', id }, opts())[Symbol.asyncIterator]();
    const r = await nextWithin(it, CALL_TIMEOUT_MS, 'first subscription event');
    ensure(!r.done, 'subscription ended before its first event');
    same(r.value.payload?.$case, 'task', 'first subscription event kind');
    same(r.value.payload.value.id, id, 'snapshot task id');
    ensure(!TERMINAL.has(r.value.payload.value.status?.state), `snapshot already terminal: ${stateName(r.value.payload.value.status?.state)}`);

    const canceled = await client.cancelTask({ tenant: '', id, metadata: undefined }, opts());
    same(canceled.id, id, 'cancel result task id');
    sameState(canceled.status?.state, TaskState.TASK_STATE_CANCELED, 'cancel result state');

    const rest = await drain(it, CALL_TIMEOUT_MS, 'subscription');
    const seq = rest.map(describe).join(', ');
    ensure(rest.length >= 1, 'subscription ended without a CANCELED status update');
    const last = rest[rest.length - 1].payload;
    same(last?.$case, 'statusUpdate', `last subscription event kind (after snapshot: ${seq})`);
    sameState(last.value.status?.state, TaskState.TASK_STATE_CANCELED, 'last subscription status');
    same(last.value.taskId, id, 'last subscription status taskId');
    for (const e of rest.slice(0, -1)) {
      const p = e.payload;
      ensure(p?.$case !== 'statusUpdate' || !TERMINAL.has(p.value.status?.state), `terminal status before the end: ${seq}`);
    }

    const after = await client.getTask({ tenant: '', id }, opts());
    sameState(after.status?.state, TaskState.TASK_STATE_CANCELED, 'state after cancel (GetTask)');
  });

  await check('get_unknown_task', async () => {
    const missing = `no-such-task-${randomUUID()}`;
    let err;
    try {
      const t = await client.getTask({ tenant: '', id: missing }, opts());
      throw new CheckError(`expected TaskNotFoundError, got a task: ${JSON.stringify(t)}`);
    } catch (e) {
      if (e instanceof CheckError) throw e;
      err = e;
    }
    ensure(err instanceof A2AError, `error is not an A2AError: ${errText(err)}`);
    ensure(err instanceof TaskNotFoundError, `error is not a TaskNotFoundError: ${errText(err)}`);
    same(err.name, 'TaskNotFoundError', 'error name');
    same(err.reason, 'TASK_NOT_FOUND', 'error reason');
    if (binding === 'JSONRPC') {
      same(err.transport, 'jsonrpc', 'error transport');
      same(err.envelopeCode, -32001, 'JSON-RPC error code');
    } else {
      same(err.transport, 'rest', 'error transport');
      same(err.statusCode, 404, 'HTTP status');
    }
  });
}

run(main, RUN_TIMEOUT_MS);

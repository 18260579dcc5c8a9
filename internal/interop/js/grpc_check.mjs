// Interoperability check over gRPC: drives a Parley server (conformance
// agent) with the official A2A JavaScript SDK's gRPC client transport
// (@a2a-js/sdk 1.3.0, client/grpc, on @grpc/grpc-js).
//
// Usage: node grpc_check.mjs BASE_URL
//   BASE_URL  e.g. http://127.0.0.1:8080: the SDK fetches the agent card from
//             BASE_URL/.well-known/agent-card.json over HTTP, picks its GRPC
//             interface and dials that interface's url (a host:port target)
//             with cleartext HTTP/2.
//
// Prints one line per check ("PASS name" or "FAIL name: why") and exits 1 if
// any check failed. A watchdog bounds the whole run so it never hangs.

import { randomUUID } from 'node:crypto';
import { Role, TaskState, taskStateToJSON } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';
import {
  CALL_TIMEOUT_MS, CheckError, TERMINAL, check, describe, drain, ensure, errText, isMessage,
  nextWithin, opts, run, same, sameState, textsOf, userMessage,
} from './checklib.mjs';

const RUN_TIMEOUT_MS = 40_000; // whole script
const GRPC_NOT_FOUND = 5;
const GRPC_FAILED_PRECONDITION = 9;

const [baseUrl] = process.argv.slice(2);
if (!baseUrl) {
  process.stderr.write('usage: node grpc_check.mjs BASE_URL\n');
  process.exit(2);
}


// Expects fn to fail with the named A2A error, carried over gRPC.
async function expectError(fn, name, reason, status) {
  let err;
  try {
    const v = await fn();
    throw new CheckError(`expected ${name}, got ${JSON.stringify(v)}`);
  } catch (e) {
    if (e instanceof CheckError) throw e;
    err = e;
  }
  same(err.name, name, `error name (${errText(err)})`);
  same(err.reason, reason, 'error reason (google.rpc.ErrorInfo)');
  same(err.transport, 'grpc', 'error transport');
  same(err.status, status, 'gRPC status code');
  return err;
}

// ---------- request builders (full objects, as the generated codecs expect) ----------

function sendRequest(text, configuration = undefined, taskId = '') {
  return { tenant: '', message: userMessage(text, taskId), configuration, metadata: undefined };
}

function configuration(extra) {
  return { acceptedOutputModes: [], taskPushNotificationConfig: undefined, historyLength: undefined, returnImmediately: false, ...extra };
}

// ---------- the run ----------

const created = {};

async function main() {
  const factory = new ClientFactory({
    transports: [new GrpcTransportFactory()],
    preferredTransports: ['GRPC'],
  });

  let client;
  await check('agent_card_grpc_interface', async () => {
    client = await factory.createFromUrl(baseUrl);
    same(client.transport.protocolName, 'GRPC', 'selected transport');
    const card = await client.getAgentCard(opts());
    const iface = (card.supportedInterfaces ?? []).find((i) => i.protocolBinding === 'GRPC');
    ensure(iface, 'card has no GRPC interface');
    same(iface.url, new URL(baseUrl).host, 'GRPC interface url (a host:port dial target)');
    same(iface.protocolVersion, '1.0', 'GRPC interface protocolVersion');
  });
  if (!client) return;

  await check('send_message_blocking', async () => {
    const res = await client.sendMessage(sendRequest('hello'), opts());
    ensure(!isMessage(res), `expected a Task, got a Message: ${JSON.stringify(res)}`);
    ensure(res.id !== '' && res.contextId !== '', 'task ids are empty');
    sameState(res.status?.state, TaskState.TASK_STATE_COMPLETED, 'task state');
    same(res.artifacts.length, 1, 'artifact count');
    same(res.artifacts[0].artifactId, 'echo', 'artifactId');
    same(JSON.stringify(textsOf(res.artifacts[0].parts)), JSON.stringify(['hello']), 'artifact parts');
    same(res.history.length, 1, 'history length');
    same(res.history[0].taskId, res.id, 'stored message taskId');
    created.hello = res.id;
  });

  await check('send_message_direct_reply', async () => {
    const res = await client.sendMessage(sendRequest('message'), opts());
    ensure(isMessage(res), `expected a Message, got: ${JSON.stringify(res)}`);
    same(res.role, Role.ROLE_AGENT, 'reply role');
    same(JSON.stringify(textsOf(res.parts)), JSON.stringify(['pong']), 'reply parts');
  });

  await check('send_streaming_message', async () => {
    const it = client.sendMessageStream(sendRequest('stream 3'), opts())[Symbol.asyncIterator]();
    const events = await drain(it, CALL_TIMEOUT_MS, 'stream');
    const seq = events.map(describe).join(', ');
    same(seq, 'task(TASK_STATE_SUBMITTED), statusUpdate(TASK_STATE_WORKING), artifactUpdate(["chunk 0"]), artifactUpdate(["chunk 1"]), artifactUpdate(["chunk 2"]), statusUpdate(TASK_STATE_COMPLETED)', 'event sequence');
    const id = events[0].payload.value.id;
    events.slice(2, 5).forEach((e, i) => {
      const a = e.payload.value;
      same(a.taskId, id, `chunk ${i} taskId`);
      same(a.artifact?.artifactId, 'stream', `chunk ${i} artifactId`);
      same(a.append, i > 0, `chunk ${i} append`);
      same(a.lastChunk, i === 2, `chunk ${i} lastChunk`);
    });
    created.stream = id;
  });

  await check('streaming_follow_up', async () => {
    const first = await client.sendMessage(sendRequest('input-required'), opts());
    sameState(first.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED, 'first state');
    const it = client
      .sendMessageStream(sendRequest('follow-up', configuration({ historyLength: 1 }), first.id), opts())
      [Symbol.asyncIterator]();
    const events = await drain(it, CALL_TIMEOUT_MS, 'follow-up stream');
    same(events[0].payload?.$case, 'task', 'first event kind');
    same(events[0].payload.value.id, first.id, 'snapshot task id');
    same(events[0].payload.value.history.length, 1, 'snapshot history with historyLength 1');
    const last = events[events.length - 1].payload;
    sameState(last.value.status?.state, TaskState.TASK_STATE_COMPLETED, 'final status');
  });

  await check('get_task', async () => {
    ensure(created.hello, 'no task from send_message_blocking');
    const t = await client.getTask({ tenant: '', id: created.hello, historyLength: 0 }, opts());
    same(t.id, created.hello, 'task id');
    sameState(t.status?.state, TaskState.TASK_STATE_COMPLETED, 'task state');
    same(t.history.length, 0, 'history length with historyLength=0');
    same(JSON.stringify(textsOf(t.artifacts[0].parts)), JSON.stringify(['hello']), 'artifact parts');
  });

  await check('list_tasks', async () => {
    ensure(created.hello && created.stream, 'tasks from earlier checks are missing');
    const res = await client.listTasks({ tenant: '', contextId: '', status: TaskState.TASK_STATE_UNSPECIFIED, pageToken: '' }, opts());
    const ids = res.tasks.map((t) => t.id);
    ensure(ids.indexOf(created.stream) >= 0 && ids.indexOf(created.stream) < ids.indexOf(created.hello), `order ${ids}`);
    same(res.nextPageToken, '', 'nextPageToken');
    same(res.totalSize, res.tasks.length, 'totalSize');
  });

  await check('cancel_with_subscription', async () => {
    const res = await client.sendMessage(sendRequest('slow 3000', configuration({ returnImmediately: true })), opts());
    ensure(!isMessage(res) && !TERMINAL.has(res.status?.state), `non-blocking send returned ${JSON.stringify(res.status)}`);
    const id = res.id;
    const it = client.resubscribeTask({ tenant: '', id }, opts())[Symbol.asyncIterator]();
    const r = await nextWithin(it, CALL_TIMEOUT_MS, 'first subscription event');
    ensure(!r.done, 'subscription ended before its first event');
    same(r.value.payload?.$case, 'task', 'first subscription event kind');
    same(r.value.payload.value.id, id, 'snapshot task id');

    const canceled = await client.cancelTask({ tenant: '', id, metadata: undefined }, opts());
    sameState(canceled.status?.state, TaskState.TASK_STATE_CANCELED, 'cancel result state');

    const rest = await drain(it, CALL_TIMEOUT_MS, 'subscription');
    const last = rest[rest.length - 1]?.payload;
    same(last?.$case, 'statusUpdate', `last subscription event (${rest.map(describe).join(', ')})`);
    sameState(last.value.status?.state, TaskState.TASK_STATE_CANCELED, 'last subscription status');

    const after = await client.getTask({ tenant: '', id }, opts());
    sameState(after.status?.state, TaskState.TASK_STATE_CANCELED, 'state after cancel (GetTask)');
    created.canceled = id;
  });

  await check('push_notification_configs', async () => {
    ensure(created.canceled, 'no task from cancel_with_subscription');
    const parked = await client.sendMessage(sendRequest('input-required'), opts());
    const cfg = await client.createTaskPushNotificationConfig(
      { tenant: '', id: '', taskId: parked.id, url: 'https://hooks.example.com/a2a', token: 'tok', authentication: undefined },
      opts(),
    );
    ensure(cfg.id !== '', 'config id is empty');
    same(cfg.taskId, parked.id, 'config taskId');
    const got = await client.getTaskPushNotificationConfig({ tenant: '', taskId: parked.id, id: cfg.id }, opts());
    same(got.url, 'https://hooks.example.com/a2a', 'config url');
    const list = await client.listTaskPushNotificationConfig({ tenant: '', taskId: parked.id, pageSize: 0, pageToken: '' }, opts());
    same(list.configs.length, 1, 'config count');
    await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: parked.id, id: cfg.id }, opts());
    await expectError(
      () => client.getTaskPushNotificationConfig({ tenant: '', taskId: parked.id, id: cfg.id }, opts()),
      'TaskNotFoundError', 'TASK_NOT_FOUND', GRPC_NOT_FOUND,
    );
  });

  await check('errors_as_google_rpc_status', async () => {
    const missing = `no-such-task-${randomUUID()}`;
    const err = await expectError(() => client.getTask({ tenant: '', id: missing }, opts()), 'TaskNotFoundError', 'TASK_NOT_FOUND', GRPC_NOT_FOUND);
    same(err.metadata?.taskId, missing, 'ErrorInfo metadata taskId');
    ensure(err.statusDetailsBin && err.statusDetailsBin.length > 0, 'no grpc-status-details-bin');
    await expectError(() => client.cancelTask({ tenant: '', id: created.hello, metadata: undefined }, opts()),
      'TaskNotCancelableError', 'TASK_NOT_CANCELABLE', GRPC_FAILED_PRECONDITION);
    const it = client.resubscribeTask({ tenant: '', id: created.hello }, opts())[Symbol.asyncIterator]();
    await expectError(() => it.next(), 'UnsupportedOperationError', 'UNSUPPORTED_OPERATION', GRPC_FAILED_PRECONDITION);
  });
}

run(main, RUN_TIMEOUT_MS);

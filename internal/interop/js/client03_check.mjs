// Interoperability check for A2A v0.3 beside v1.0: drives a Parley server
// (conformance agent) with the official A2A JavaScript SDK's last v0.3
// release (@a2a-js/sdk 0.3.14, installed under the alias a2a-sdk-03).
//
// Usage: node client03_check.mjs BASE_URL BINDING [WEBHOOK_URL]
//   BASE_URL     the agent's base URL; the SDK reads the card itself
//   BINDING      JSONRPC, HTTP+JSON or GRPC (the SDK's preferred transport)
//   WEBHOOK_URL  when given, a push config with this URL is registered on
//                a task that then completes (the Go test checks what the
//                webhook received)
//
// Prints one line per check ("PASS name" or "FAIL name: why") and exits 1
// if any failed. A watchdog bounds the run.

import { randomUUID } from 'node:crypto';
import {
  ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, RestTransportFactory,
} from 'a2a-sdk-03/client';
import { GrpcTransportFactory } from 'a2a-sdk-03/client/grpc';

const [baseUrl, binding, webhook] = process.argv.slice(2);
if (!baseUrl || !['JSONRPC', 'HTTP+JSON', 'GRPC'].includes(binding)) {
  process.stderr.write('usage: node client03_check.mjs BASE_URL JSONRPC|HTTP+JSON|GRPC [WEBHOOK_URL]\n');
  process.exit(2);
}
setTimeout(() => { console.log('FAIL watchdog: the run took longer than 40 s'); process.exit(1); }, 40_000).unref();

let failed = 0;
async function check(name, fn) {
  try {
    await fn();
    console.log(`PASS ${name}`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}: ${e?.stack ?? e}`);
  }
}
function ensure(cond, why) { if (!cond) throw new Error(why); }
const msg = (text, extra = {}) => ({ kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text }], ...extra });
const show = (v) => JSON.stringify(v);

const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
  transports: [new JsonRpcTransportFactory(), new RestTransportFactory(), new GrpcTransportFactory()],
  preferredTransports: [binding],
}));
const client = await factory.createFromUrl(baseUrl);

await check('card: a v0.3 reader sees protocolVersion 0.3 and the preferred transport', async () => {
  const card = await client.getAgentCard();
  ensure(card.protocolVersion?.startsWith('0.3'), `protocolVersion ${card.protocolVersion}`);
  ensure(card.url && card.preferredTransport, `url ${card.url}, preferredTransport ${card.preferredTransport}`);
  const t = client.transport.constructor.name;
  const want = { JSONRPC: 'JsonRpc', 'HTTP+JSON': 'Rest', GRPC: 'Grpc' }[binding];
  ensure(t.includes(want), `transport ${t} for ${binding}`);
});

let doneTask;
await check('message/send: a completed task with kind, lowercase state and the echo artifact', async () => {
  const r = await client.sendMessage({ message: msg('hello v0.3') });
  ensure(r.kind === 'task' && r.status.state === 'completed', show(r));
  ensure(r.artifacts?.[0]?.parts?.[0]?.kind === 'text', `artifact ${show(r.artifacts)}`);
  doneTask = r;
});

await check('tasks/get: historyLength 1 keeps one message', async () => {
  const t = await client.getTask({ id: doneTask.id, historyLength: 1 });
  ensure(t.id === doneTask.id && t.history?.length === 1, show(t));
});

await check('message/stream: task, status-update, artifact-updates, a final status-update', async () => {
  const kinds = [];
  let last;
  for await (const ev of client.sendMessageStream({ message: msg('stream 2') })) {
    kinds.push(ev.kind);
    last = ev;
  }
  ensure(kinds[0] === 'task' && kinds.includes('artifact-update'), `kinds ${kinds}`);
  ensure(last.kind === 'status-update' && last.final === true && last.status.state === 'completed', `last ${show(last)}`);
});

let waiting;
await check('input-required task', async () => {
  waiting = await client.sendMessage({ message: msg('input-required') });
  ensure(waiting.status.state === 'input-required', show(waiting));
});

await check('push config set/get/list/delete', async () => {
  const set = await client.setTaskPushNotificationConfig({ taskId: waiting.id, pushNotificationConfig: { id: 'c1', url: 'https://hooks.example/a2a', token: 'tok' } });
  ensure(set.taskId === waiting.id && set.pushNotificationConfig.id === 'c1' && set.pushNotificationConfig.url === 'https://hooks.example/a2a', show(set));
  const got = await client.getTaskPushNotificationConfig({ id: waiting.id, pushNotificationConfigId: 'c1' });
  ensure(got.pushNotificationConfig.token === 'tok', show(got));
  const list = await client.listTaskPushNotificationConfig({ id: waiting.id });
  ensure(list.length === 1 && list[0].pushNotificationConfig.id === 'c1', show(list));
  await client.deleteTaskPushNotificationConfig({ id: waiting.id, pushNotificationConfigId: 'c1' });
  const after = await client.listTaskPushNotificationConfig({ id: waiting.id });
  ensure(after.length === 0, show(after));
});

await check('tasks/resubscribe then tasks/cancel: snapshot first, final canceled last', async () => {
  const it = client.resubscribeTask({ id: waiting.id })[Symbol.asyncIterator]();
  const first = await it.next();
  ensure(first.value?.kind === 'task' && first.value.id === waiting.id, show(first.value));
  const c = await client.cancelTask({ id: waiting.id });
  ensure(c.status.state === 'canceled', show(c));
  let last;
  for (let r = await it.next(); !r.done; r = await it.next()) last = r.value;
  ensure(last?.kind === 'status-update' && last.final === true && last.status.state === 'canceled', show(last));
});

await check('errors: an unknown task is TaskNotFound (-32001)', async () => {
  try {
    await client.getTask({ id: 'no-such-task' });
  } catch (e) {
    ensure(e.constructor.name.includes('TaskNotFound') || String(e.message).includes('-32001'), `${e.constructor.name}: ${e.message}`);
    return;
  }
  throw new Error('no error');
});

await check('errors: cancelling a completed task is TaskNotCancelable (-32002)', async () => {
  try {
    await client.cancelTask({ id: doneTask.id });
  } catch (e) {
    ensure(e.constructor.name.includes('TaskNotCancelable') || String(e.message).includes('-32002'), `${e.constructor.name}: ${e.message}`);
    return;
  }
  throw new Error('no error');
});

if (webhook) {
  await check('push: a config registered with message/send configuration', async () => {
    const r = await client.sendMessage({
      message: msg('hello push'),
      configuration: { blocking: true, pushNotificationConfig: { url: webhook, token: 'push-token' } },
    });
    ensure(r.kind === 'task' && r.status.state === 'completed', show(r));
    console.log(`TASK ${r.id}`);
  });
}

process.exit(failed ? 1 : 0);

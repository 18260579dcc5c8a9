// Interoperability check: the official A2A JavaScript SDK client
// (@a2a-js/sdk) calls a Parley server that serves the tools of an MCP server
// (`parley serve --mcp`, with mcp_server.mjs behind it): the card's skills,
// a tool call, progress on a stream, a question answered by a follow-up,
// an unknown tool.
//
// Usage: node mcp_a2a_check.mjs BASE_URL BINDING   (JSONRPC or HTTP+JSON)
//
// Prints one line per check ("PASS name" or "FAIL name: why") and exits 1 if
// any check failed.

import { TaskState } from '@a2a-js/sdk';
import { ClientFactory, JsonRpcTransportFactory, RestTransportFactory } from '@a2a-js/sdk/client';
import { CALL_TIMEOUT_MS, check, describe, drain, ensure, isMessage, opts, run, same, sameState, textsOf, userMessage } from './checklib.mjs';

const [baseUrl, binding] = process.argv.slice(2);
if (!baseUrl || !['JSONRPC', 'HTTP+JSON'].includes(binding)) {
  process.stderr.write('usage: node mcp_a2a_check.mjs BASE_URL JSONRPC|HTTP+JSON\n');
  process.exit(2);
}

const send = (text, taskId = '') => ({ tenant: '', message: userMessage(text, taskId), configuration: undefined, metadata: undefined });

async function main() {
  const factory = new ClientFactory({
    transports: [binding === 'JSONRPC' ? new JsonRpcTransportFactory() : new RestTransportFactory()],
    preferredTransports: [binding],
  });
  const client = await factory.createFromUrl(baseUrl);

  await check('card_skills_are_tools', async () => {
    const card = await client.getAgentCard(opts());
    const ids = (card.skills ?? []).map((s) => s.id);
    ensure(ids.includes('echo') && ids.includes('ask'), `skills ${JSON.stringify(ids)}: want the MCP tools`);
    ensure(card.defaultInputModes.includes('application/json'), 'data parts are not among the input modes');
  });

  await check('tool_call', async () => {
    const res = await client.sendMessage(send('echo {"text": "from JS"}'), opts());
    ensure(!isMessage(res), 'expected a Task');
    sameState(res.status?.state, TaskState.TASK_STATE_COMPLETED, 'task state');
    same(res.artifacts[0].artifactId, 'result', 'artifactId');
    same(JSON.stringify(textsOf(res.artifacts[0].parts)), JSON.stringify(['echo: from JS']), 'artifact parts');
  });

  await check('progress_stream', async () => {
    const it = client.sendMessageStream(send('progress {"steps": 2}'), opts())[Symbol.asyncIterator]();
    const events = await drain(it, CALL_TIMEOUT_MS, 'stream');
    const seq = events.map(describe).join(', ');
    const said = events.filter((e) => e.payload?.$case === 'statusUpdate')
      .flatMap((e) => textsOf(e.payload.value.status?.message?.parts ?? []));
    ensure(said.includes('progress 1/2: step 1') && said.includes('progress 2/2: step 2'), `no progress updates: ${seq} ${JSON.stringify(said)}`);
    ensure(seq.endsWith('statusUpdate(TASK_STATE_COMPLETED)'), `stream ${seq}: want COMPLETED last`);
  });

  await check('elicitation_follow_up', async () => {
    const asked = await client.sendMessage(send('ask'), opts());
    sameState(asked.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED, 'state after ask');
    ensure(textsOf(asked.status.message.parts)[0].startsWith('What is your name?'), 'the question is not in the status message');
    const done = await client.sendMessage(send('Grace', asked.id), opts());
    sameState(done.status?.state, TaskState.TASK_STATE_COMPLETED, 'state after the answer');
    same(JSON.stringify(textsOf(done.artifacts[0].parts)), JSON.stringify(['hello Grace']), 'answer');
  });

  await check('unknown_tool_rejected', async () => {
    const res = await client.sendMessage(send('nope {}'), opts());
    sameState(res.status?.state, TaskState.TASK_STATE_REJECTED, 'task state');
  });
}

run(main, 28_000);

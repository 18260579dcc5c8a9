// Helpers shared by the interop scripts that drive Parley with the official
// A2A JavaScript SDK (@a2a-js/sdk 1.3.0): assertions, a check runner bounded
// by a watchdog, stream readers and request builders.

import { randomUUID } from 'node:crypto';
import { Role, TaskState, taskStateToJSON } from '@a2a-js/sdk';

export const CALL_TIMEOUT_MS = 8_000; // per unary call and per stream

let failures = 0;


export class CheckError extends Error {}

export function ensure(cond, why) {
  if (!cond) throw new CheckError(why);
}

export function same(actual, expected, what) {
  if (actual !== expected) {
    throw new CheckError(`${what}: got ${JSON.stringify(actual)}, want ${JSON.stringify(expected)}`);
  }
}

export function stateName(s) {
  return taskStateToJSON(s);
}

export function sameState(actual, expected, what) {
  if (actual !== expected) {
    throw new CheckError(`${what}: got ${stateName(actual)}, want ${stateName(expected)}`);
  }
}

export const TERMINAL = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);
export const KNOWN_STATES = new Set(
  Object.values(TaskState).filter((v) => typeof v === 'number' && v > 0),
);

export function isMessage(result) {
  // The SDK hands back either a Message (has messageId) or a Task (has id/status).
  return result !== null && typeof result === 'object' && 'messageId' in result;
}

export function textsOf(parts) {
  return (parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : `<${p.content?.$case ?? 'empty'} part>`));
}

export function describe(ev) {
  const c = ev?.payload?.$case;
  if (c === 'task') return `task(${stateName(ev.payload.value.status?.state)})`;
  if (c === 'statusUpdate') return `statusUpdate(${stateName(ev.payload.value.status?.state)})`;
  if (c === 'artifactUpdate') return `artifactUpdate(${JSON.stringify(textsOf(ev.payload.value.artifact?.parts))})`;
  if (c === 'message') return 'message';
  return `unknown(${JSON.stringify(ev)})`;
}

export function errText(e) {
  if (e instanceof CheckError) return e.message;
  const parts = [`${e?.name ?? 'Error'}: ${e?.message ?? String(e)}`];
  if (e?.cause) parts.push(`cause: ${e.cause?.message ?? String(e.cause)}`);
  return parts.join('; ');
}

export async function check(name, fn) {
  try {
    await fn();
    console.log(`PASS ${name}`);
  } catch (e) {
    failures++;
    console.log(`FAIL ${name}: ${errText(e).replace(/\s+/g, ' ')}`);
  }
}

export function opts() {
  return { signal: AbortSignal.timeout(CALL_TIMEOUT_MS) };
}

// Pulls the next event from an async iterator, failing after ms milliseconds.
export async function nextWithin(it, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new CheckError(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([it.next(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

// Reads a stream to its end (bounded), returning all events.
export async function drain(it, ms, what, into = []) {
  const deadline = Date.now() + ms;
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0) throw new CheckError(`${what} did not end within ${ms} ms (got ${into.map(describe).join(', ')})`);
    let r;
    try {
      r = await nextWithin(it, left, `${what} to end (got ${into.map(describe).join(', ') || 'nothing'})`);
    } catch (e) {
      if (e instanceof CheckError) throw e;
      throw new CheckError(`${what} broke after [${into.map(describe).join(', ')}]: ${errText(e)}`);
    }
    if (r.done) return into;
    into.push(r.value);
  }
}

// A user message with one text part. Full objects: the SDK's codecs
// serialise enums of missing fields as "UNRECOGNIZED".
export function userMessage(text, taskId = '') {
  return {
    messageId: randomUUID(),
    contextId: '',
    taskId,
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

// Runs main with a watchdog of runTimeoutMs, then exits 1 if any check
// failed. It exits explicitly: keep-alive sockets must not delay the end.
export function run(main, runTimeoutMs) {
  const watchdog = setTimeout(() => {
    console.log(`FAIL watchdog: run exceeded ${runTimeoutMs} ms`);
    process.exit(1);
  }, runTimeoutMs);
  main()
    .catch((e) => {
      failures++;
      console.log(`FAIL run: ${errText(e)}`);
    })
    .finally(() => {
      clearTimeout(watchdog);
      process.exit(failures > 0 ? 1 : 0);
    });
}

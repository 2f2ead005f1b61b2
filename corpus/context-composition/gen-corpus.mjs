// Generates corpus.json for context-composition/v1: synthetic records authored here (no real
// session record is read), with expected pre-check and audit outputs derived by reference.mjs, an
// independent reading of the criteria text. Pinned by sha256 over the JCS of the corpus object
// without its sha256 member.
//
//   node corpus/context-composition/gen-corpus.mjs        # writes corpus.json, prints the pin

import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as ref from './reference.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const criteria = JSON.parse(readFileSync(join(here, 'context-composition-v1.criteria.json'), 'utf8'));
const V = ref.ENVELOPE_VERSION;
const CALLER = '11111111111111111111111111111111';
const FILL = '@@FILL@@';

const cases = [];
const add = (name, body, extra = {}) => cases.push({ name, body, ...extra });
const env = (format, record, more = {}) => JSON.stringify({ envelope_version: V, declared_format_id: format, record, ...more });
const gen = (messages, more = {}) => env('generic-message-list', { messages, ...more.record }, more.env ?? {});
const msg = (role, text, more = {}) => ({ role, text, ...more });
const words = (n, prefix = 'w') => Array.from({ length: n }, (_, i) => `${prefix}${i}`).join(' ');
const B64_40 = 'QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNk'; // 40 chars, decodes to 30 bytes

// ------------------------------------------------------------------ refusals (R-1..R-6, stated counts)
add('R-1 body over the 5 MiB cap', `{"envelope_version":"${V}","pad":"${FILL}"}`, { body_fill: { char: 'a', count: ref.BODY_CAP } });
add('R-1 body is not JSON', 'not json at all');
add('R-1 body is a JSON array', '[]');
add('R-1 body is a JSON string', '"context-composition-envelope/1"');
add('R-1 body is not UTF-8', null, { body_base64: Buffer.from([0x7b, 0xff, 0xfe, 0x7d]).toString('base64') });
add('R-1 body starts with a byte order mark', `\ufeff${env('generic-message-list', { messages: [] })}`);
add('R-1 duplicated envelope_version member', `{"envelope_version":"${V}","envelope_version":"${V}","declared_format_id":"generic-message-list","record":{"messages":[]}}`);
add('R-2 envelope_version absent', JSON.stringify({ declared_format_id: 'generic-message-list', record: { messages: [] } }));
add('R-2 envelope_version of another version', JSON.stringify({ envelope_version: 'context-composition-envelope/2', declared_format_id: 'generic-message-list', record: { messages: [] } }));
add('R-3 declared_format_id absent', JSON.stringify({ envelope_version: V, record: { messages: [] } }));
add('R-3 declared_format_id not accepted', env('openai-chat', { messages: [] }));
add('R-3 declared_format_id not a string', JSON.stringify({ envelope_version: V, declared_format_id: 7, record: {} }));
add('R-4 record absent', JSON.stringify({ envelope_version: V, declared_format_id: 'letta-af' }));
add('R-4 record null', env('letta-af', null));
add('R-4 record given twice', `{"envelope_version":"${V}","declared_format_id":"generic-message-list","record":{"messages":[]},"record":{"messages":[]}}`);
add('R-5 letta-af record is a number', env('letta-af', 42));
add('R-5 letta-af double-encoded string is not JSON', env('letta-af', '{"agents": ['));
add('R-5 letta-af message role is not a string', env('letta-af', { messages: [{ role: 3, content: [] }] }));
add('R-5 letta-af tool_calls is an object', env('letta-af', { agents: [{ messages: [{ role: 'assistant', tool_calls: {} }] }] }));
add('R-5 anthropic-messages role is not a string', env('anthropic-messages', [{ role: 5, content: 'x' }]));
add('R-5 anthropic-messages content is a number', env('anthropic-messages', { messages: [{ role: 'user', content: 1 }] }));
add('R-5 anthropic-messages is never retried as generic', env('anthropic-messages', { messages: [{ role: 'user', text: 'hello there' }] }));
add('R-5 generic-message-list text is a number', gen([msg('user', 5)]));
add('R-5 generic-message-list stated_tokens negative', gen([msg('user', 'x', { stated_tokens: -1 })]));
add('R-5 generic-message-list has_args not boolean', gen([msg('assistant', 'x', { has_args: 'yes' })]));
add('stated counts not an object', gen([msg('user', 'x')], { env: { harness_stated_counts: [1, 2] } }));
add('stated counts unknown member', gen([msg('user', 'x')], { env: { harness_stated_counts: { per_message: [1], extra: 1 } } }));
add('stated counts non-integer', gen([msg('user', 'x')], { env: { harness_stated_counts: { total: 1.5 } } }));
add('stated counts over 64 KiB', `{"envelope_version":"${V}","declared_format_id":"generic-message-list","record":{"messages":[{"role":"user","text":"x"}]},"harness_stated_counts":{"per_message":[${FILL}null]}}`, { body_fill: { char: 'null,', count: 13200 } });
add('stated counts just under 64 KiB', `{"envelope_version":"${V}","declared_format_id":"generic-message-list","record":{"messages":[{"role":"user","text":"x"}]},"harness_stated_counts":{"per_message":[${FILL}null]}}`, { body_fill: { char: 'null,', count: 13100 } });
add('R-6 caller invalid', gen([msg('user', 'hello')], { env: { caller: 'not-a-solana-address' } }));

// ------------------------------------------------------------------ could-not-measure (R-7..R-9)
add('R-7 too many entries (10,001 messages)', gen(new Array(10001).fill({})));
add('R-7 entry over the 1 MiB single-entry cap', `{"envelope_version":"${V}","declared_format_id":"generic-message-list","record":{"messages":[{"role":"user","text":"${FILL}"}]}}`, { body_fill: { char: 'b', count: ref.ENTRY_BYTES_CAP + 1 } });
add('at the 1 MiB single-entry cap is measured', `{"envelope_version":"${V}","declared_format_id":"generic-message-list","record":{"messages":[{"role":"user","text":"${FILL}"}]}}`, { body_fill: { char: 'b', count: ref.ENTRY_BYTES_CAP } });
add('R-8 zero entries (generic)', gen([]));
add('R-8 zero entries (anthropic tools only)', env('anthropic-messages', { messages: [], tools: [{ name: 't', input_schema: {} }] }));
add('R-9 nothing assessable (all texts null)', gen([msg('user', null), msg('assistant', null)]));
add('R-9 nothing assessable (messages without blocks)', env('anthropic-messages', [{ role: 'user', content: [] }]));

// ------------------------------------------------------------------ classification
add('generic L0 plain conversation', gen([msg('user', 'What is the capital of France?'), msg('assistant', 'Paris is the capital of France.')]));
add('generic L2 every P class by kind', gen([
  msg(null, 'compacted summary of earlier turns', { kind: 'summary' }),
  msg('assistant', '{"city":"Paris"}', { kind: 'tool_call' }),
  msg('tool', 'sunny, 21 degrees', { kind: 'tool_result' }),
  msg(null, 'Retrieved passage about Paris weather patterns', { kind: 'retrieval' }),
  msg('system', 'You are a helpful assistant.'),
  msg('user', 'Hello'),
  msg('assistant', 'Hi'),
  msg('user', 'unknown kind block', { kind: 'annotation' }),
  msg(null, 'no role and no kind'),
], { record: { tool_schemas: [{ name: 'weather', parameters: { type: 'object' } }, 'lookup(city: string)'] } }));
add('generic kind tool_schema block is P-TDEF', gen([msg(null, 'def f(x): return x', { kind: 'tool_schema' }), msg('user', 'use it')]));
add('generic L1 has_args conflict P-TCALL over P-ASST', gen([msg('user', 'call it'), msg('assistant', '{"a":1}', { has_args: true }), msg('tool', 'done')]));
add('generic L1 by a tool role: zero P-TCALL is a measured zero', gen([msg('user', 'look it up'), msg('tool', 'result text'), msg('assistant', 'done')]));
add('P conflict unknown role with tool_call kind', gen([msg('user', 'go'), msg('robot', '{"x":2}', { kind: 'tool_call' })]));
add('P-OTHER by unknown role', gen([msg('narrator', 'Once upon a time'), msg('user', 'continue')]));
add('empty role and kind are absent (P-UNK)', gen([msg('', 'neither', { kind: '' }), msg('user', 'u')]));
add('C classes all present', gen([
  msg('user', ''),
  msg('user', '  \n\t '),
  msg('user', null),
  msg('user', `${B64_40}${B64_40}`),
  msg('user', 'BEGIN LOG\nsomething happened'),
  msg('user', '2026-01-01 10:00:00 a\n[2026-01-01T10:00:01 b\n2026-01-01 10:00:02 c\n2026-01-01 10:00:03 d\nfree text'),
  msg('tool', JSON.stringify(Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`key_${i}`, 'value value value value'])))),
  msg('tool', '{"small": true}'),
  msg('assistant', 'Here:\n```js\nlet x = 1;\n```'),
  msg('assistant', 'Plain prose answer.'),
]));
add('C conflict code fence inside raw export', gen([msg('user', 'BEGIN EXPORT\n```\ncode\n```')]));
add('raw log lines 3 of 4 is under 80%', gen([msg('user', '2026-01-01 10:00:00 a\n2026-01-01 10:00:01 b\n2026-01-01 10:00:02 c\nnote'), msg('assistant', 'ok')]));
add('raw marker must equal the whole line', gen([msg('user', ' BEGIN RAW\nBEGIN RAW DATA\nbegin raw')]));
add('JSON with 10 keys at C=199 and C=200', gen([
  msg('tool', JSON.stringify(Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`k${i}`, 'x'.repeat(i === 0 ? 110 : 1)])))),
  msg('tool', JSON.stringify(Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`k${i}`, 'x'.repeat(i === 0 ? 111 : 1)])))),
  msg('tool', JSON.stringify(Array.from({ length: 9 }, () => 'y'.repeat(30)))),
]));
add('base64 census edge lengths', gen([
  msg('user', `len40 ${B64_40} end`),
  msg('user', `len39 ${B64_40.slice(0, 39)} end`),
  msg('user', `pad1 ${'A'.repeat(42)}E= end`),
  msg('user', `noncanonical ${'A'.repeat(42)}B= end`),
  msg('user', `pad2 ${'A'.repeat(38)}== is 28 bytes`),
  msg('user', `pad2ok ${'A'.repeat(42)}Q== ok`),
  msg('user', `url ${'A'.repeat(42)}-_ end`),
  msg('user', `mixed ${'A'.repeat(42)}-+ end`),
  msg('user', `slashy /usr/local/share/some/very/long/path/name/here end`),
  msg('user', `three pads ${'A'.repeat(42)}Q=== end`),
]));
add('blob 90% boundary', gen([
  msg('user', `${B64_40}abcd`),
  msg('user', `${B64_40}abcde`),
]));
add('NFC and astral code points', gen([
  msg('user', 'cafe\u0301 cafe\u0301 cafe\u0301'),
  msg('assistant', 'caf\u00e9 caf\u00e9 caf\u00e9'),
  msg('user', '\u{1F600}\u{1F600}\u{1F600}\u{1F600}\u{1F600}'),
]));
add('exact duplicates with whitespace and line-break variants', gen([
  msg('user', 'Repeat this line please'),
  msg('assistant', '  Repeat\r\nthis   line\u00a0please  '),
  msg('user', 'repeat this line please'),
  msg('assistant', 'Repeat this line please'),
  msg('user', '   '),
  msg('assistant', '   '),
]));
add('near duplicates at the 0.80 boundary', gen([
  msg('user', 'alpha beta gamma delta epsilon zeta eta'),
  msg('assistant', 'alpha beta gamma delta epsilon zeta'),
  msg('user', 'alpha beta gamma delta epsilon'),
  msg('assistant', 'Alpha, beta; gamma (delta) "epsilon" zeta!'),
  msg('user', 'one two'),
  msg('assistant', 'one two'),
]));
add('near duplicates exact pairs excluded, case variants paired', gen([
  msg('user', 'The quick brown fox jumps'),
  msg('assistant', 'The quick brown fox jumps'),
  msg('user', 'the QUICK brown fox jumps'),
]));
{
  const base = words(40, 'tok');
  add('near duplicate pair list over 1000 pairs', gen(Array.from({ length: 50 }, (_, i) => msg(i % 2 ? 'assistant' : 'user', `${base} unique${i}`))));
}
add('turn growth with a system preamble', gen([
  msg('system', 'System prompt text here.'),
  msg('assistant', 'Ready.'),
  msg('user', 'First question?'),
  msg('assistant', 'First answer with more words in it.'),
  msg('user', 'Second question?'),
  msg('assistant', 'Second answer.'),
  msg('tool', 'tool output'),
  msg('user', 'Third.'),
]));
add('first message from the user: turn 0 empty', gen([msg('user', 'hi'), msg('assistant', 'hello'), msg('user', 'bye')]));
add('no user message: turn growth not assessable', gen([msg('system', 'rules'), msg('assistant', 'monologue')]));
add('message distribution ranks and 10% contributors', gen([
  ...[4, 8, 12, 16, 20, 24, 28, 32, 36, 400].map((n, i) => msg(i % 2 ? 'assistant' : 'user', 'x'.repeat(n))),
]));
add('top-3 ties go to the lower index', gen([4, 4, 4, 4, 4].map((n) => msg('user', 'y'.repeat(n)))));
add('share rounding half up (0.625%)', gen([msg('user', 'a'.repeat(20)), msg('assistant', 'b'.repeat(3180))]));
add('zero total estimate: shares not assessable', gen([msg('user', ''), msg('assistant', '')]));
add('largest block ties to the lowest index', gen([msg('system', 'abcd'), msg('user', 'efgh'), msg('assistant', 'ij')]));
add('positions of system and compaction blocks', gen([
  msg('system', 'S'.repeat(40)),
  msg('user', 'U'.repeat(40)),
  msg(null, 'summary of before', { kind: 'compaction' }),
  msg('system', 'late system note'),
]));
add('null text counts as unknown in every table', gen([msg('user', 'visible'), msg('tool', null), msg(null, null)]));
add('unknown envelope members are counted, never echoed', gen([msg('user', 'counted')], { env: { zzz_secret: 'do-not-echo', another: { nested: true }, criteria_ack: 'context-composition/v1', declared_format_version: '1' } }));
add('valid caller is accepted', gen([msg('user', 'with caller')], { env: { caller: CALLER } }));

// ------------------------------------------------------------------ stated counts (M12)
add('stated counts within and outside 5%', gen([
  msg('user', 'a'.repeat(400)),
  msg('assistant', 'b'.repeat(400)),
  msg('user', 'c'.repeat(400)),
  msg('assistant', ''),
  msg('user', ''),
], { env: { harness_stated_counts: { per_message: [105, 106, 95, 0, 3] } } }));
add('stated counts partial coverage', gen([msg('user', 'a'.repeat(40)), msg('assistant', 'b'.repeat(40))], { env: { harness_stated_counts: { per_message: [10, null] } } }));
add('stated total only', gen([msg('user', 'a'.repeat(40)), msg('assistant', 'b'.repeat(40))], { env: { harness_stated_counts: { total: 21 } } }));
add('stated counts from the record', gen([msg('user', 'a'.repeat(40), { stated_tokens: 10 }), msg('assistant', 'b'.repeat(40), { stated_tokens: 12 })], { record: { stated_total: 30 } }));
add('harness stated counts take precedence over the record', gen([msg('user', 'a'.repeat(40), { stated_tokens: 99 })], { env: { harness_stated_counts: { per_message: [10] } } }));
add('stated per_message longer than the record', gen([msg('user', 'a'.repeat(40))], { env: { harness_stated_counts: { per_message: [10, 5, 5] } } }));
add('empty stated counts object is no stated counts', gen([msg('user', 'hello')], { env: { harness_stated_counts: {} } }));

// ------------------------------------------------------------------ letta-af
const lettaMsg = (role, parts, more = {}) => ({ type: 'message', role, content: parts, tool_calls: null, tool_returns: [], ...more });
const lt = (text) => ({ type: 'text', text, signature: null });
const lettaTools = [{ id: 'tool-1', name: 'send_message', json_schema: { name: 'send_message', parameters: { type: 'object', properties: { message: { type: 'string' } } } }, source_code: 'def send_message(message: str):\n    return None' }];
const lettaMessages = [
  lettaMsg('system', [lt('You are a synthetic agent used for testing.')]),
  lettaMsg('user', [lt(JSON.stringify({ type: 'user_message', message: 'hello agent', time: '2026-01-01 10:00:00 AM UTC+0000' }))]),
  lettaMsg('assistant', [{ type: 'reasoning', reasoning: 'The user greeted me; reply.', signature: null }], {
    tool_calls: [{ id: 'call-1', function: { name: 'send_message', arguments: '{"message": "Hello!"}' }, type: 'function' }],
  }),
  lettaMsg('tool', [lt('{"status": "OK", "message": "None"}')], {
    tool_call_id: 'call-1',
    tool_returns: [{ tool_call_id: 'call-1', status: 'success', stdout: null, stderr: null, func_response: '{"status": "OK", "message": "None"}' }],
  }),
  lettaMsg('user', [lt(JSON.stringify({ type: 'system_alert', message: 'Note: prior messages have been hidden from view due to conversation memory constraints.', time: 'x' }))]),
  lettaMsg('user', [lt('Second question from the user.')]),
  lettaMsg('assistant', [], { tool_calls: [{ id: 'call-2', function: { name: 'send_message', arguments: { message: 'structured' } }, type: 'function' }] }),
  lettaMsg('tool', null, { tool_returns: [{ tool_call_id: 'call-2', status: 'error', func_response: null }] }),
];
add('letta-af current schema', env('letta-af', { agents: [{ name: 'a', messages: lettaMessages, memory_blocks: [] }], tools: lettaTools, metadata: {} }));
add('letta-af legacy v1 single agent', env('letta-af', { agent_type: 'memgpt_agent', messages: lettaMessages.slice(0, 4), tools: lettaTools, in_context_message_indices: [0, 1, 2, 3] }));
add('letta-af double-encoded file', env('letta-af', JSON.stringify({ agents: [{ messages: lettaMessages.slice(0, 3) }], tools: [] })));
add('letta-af several agents are all taken', env('letta-af', { agents: [{ messages: lettaMessages.slice(0, 2) }, { messages: lettaMessages.slice(5, 7) }, { name: 'empty agent' }] }));
add('letta-af message_type kinds and string content', env('letta-af', { messages: [
  { role: 'system', message_type: 'system_message', content: 'system via string content' },
  { role: 'user', message_type: 'user_message', content: [lt('typed user text')] },
  { role: 'assistant', message_type: 'hidden_reasoning_message', content: [lt('hidden')] },
  { role: 'assistant', message_type: 'summary_message', content: 'summary text' },
  { role: 'assistant', message_type: 'approval_request_message', content: 'approve?' },
] }));
add('letta-af image part is a blob', env('letta-af', { messages: [
  lettaMsg('user', [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: `${B64_40}${B64_40}` } }, lt('what is this?')]),
  lettaMsg('assistant', [lt('An image.')]),
] }));

// ------------------------------------------------------------------ anthropic-messages
add('anthropic bare array', env('anthropic-messages', [
  { role: 'user', content: 'What is the weather in Paris?' },
  { role: 'assistant', content: [{ type: 'text', text: 'Let me check.' }] },
]));
add('anthropic full Messages API request object', env('anthropic-messages', {
  model: 'synthetic-model', max_tokens: 1024, temperature: 0,
  system: 'You are a weather bot.',
  tools: [{ name: 'get_weather', description: 'Lookup the weather', input_schema: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] } }],
  messages: [
    { role: 'user', content: 'Weather in Paris?' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { location: 'Paris' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '{"temp": 21, "sky": "clear"}' }] },
    { role: 'assistant', content: 'It is 21 degrees and clear.' },
  ],
}));
add('anthropic every current block type', env('anthropic-messages', {
  system: [{ type: 'text', text: 'System block one.' }, { type: 'text', text: 'System block two.' }],
  messages: [
    { role: 'user', content: [
      { type: 'text', text: 'Look at these.' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: B64_40 } },
      { type: 'image', source: { type: 'url', url: 'https://example.invalid/cat.png' } },
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: `${B64_40}${B64_40}` } },
      { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'Plain document text.' } },
      { type: 'document', source: { type: 'content', content: [{ type: 'text', text: 'part one' }, { type: 'text', text: 'part two' }] } },
      { type: 'search_result', source: 'https://example.invalid', title: 'T', content: [{ type: 'text', text: 'result a' }, { type: 'text', text: 'result b' }] },
      { type: 'container_upload', file_id: 'file_1' },
    ] },
    { role: 'assistant', content: [
      { type: 'thinking', thinking: 'Reasoning about the images.', signature: 'sig' },
      { type: 'redacted_thinking', data: 'RW5jcnlwdGVkIHJlYXNvbmluZyBkYXRhIGJsb2IgZm9yIHRlc3Rpbmcgb25seQ==' },
      { type: 'server_tool_use', id: 'srv_1', name: 'web_search', input: { query: 'paris weather' } },
      { type: 'web_search_tool_result', tool_use_id: 'srv_1', content: [{ type: 'web_search_result', url: 'https://example.invalid', title: 'W', encrypted_content: 'abc' }] },
      { type: 'web_fetch_tool_result', tool_use_id: 'srv_2', content: { type: 'web_fetch_result', url: 'https://example.invalid' } },
      { type: 'code_execution_tool_result', tool_use_id: 'srv_3', content: { type: 'code_execution_result', stdout: '42', stderr: '', return_code: 0 } },
      { type: 'bash_code_execution_tool_result', tool_use_id: 'srv_4', content: { stdout: 'ok' } },
      { type: 'mcp_tool_use', id: 'mcp_1', name: 'lookup', server_name: 's', input: { q: 1 } },
      { type: 'mcp_tool_result', tool_use_id: 'mcp_1', content: [{ type: 'text', text: 'mcp says hi' }] },
      { type: 'tool_use', id: 'toolu_9', name: 'calc', input: { a: 1, b: 2 } },
      { type: 'compaction', content: 'Summary of the earlier conversation.' },
      { type: 'future_block_type', payload: 'unknown to this criteria version' },
      { text: 'a block without a type' },
    ] },
    { role: 'user', content: [
      { type: 'tool_result', tool_use_id: 'toolu_9', content: [{ type: 'text', text: '3' }, { type: 'image', source: { type: 'base64', data: B64_40 } }, { type: 'mystery' }] },
      { type: 'tool_result', tool_use_id: 'toolu_8', content: [] },
      { type: 'tool_result', tool_use_id: 'toolu_7' },
      { type: 'tool_result', tool_use_id: 'toolu_6', content: 12 },
    ] },
  ],
}));
add('anthropic tool output headline share', env('anthropic-messages', [
  { role: 'user', content: 'run it' },
  { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'run', input: {} }] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'o'.repeat(300) }] },
]));
add('anthropic image with empty data: C-EMPTY over C-BLOB', env('anthropic-messages', [
  { role: 'user', content: [{ type: 'image', source: { type: 'base64', data: '' } }, { type: 'text', text: 'empty image' }] },
]));

// ------------------------------------------------------------------ readings pinned (issue 25)
// 1. Shares are of T; the schema pseudo-message belongs to turn 0.
const bigSchema = { name: 'search', description: 'd'.repeat(200), parameters: { type: 'object' } };
add('shares of T: M06 contributors and M07 cumulative with a schema section', gen([
  msg('system', 'S'.repeat(40)),
  msg('user', 'U'.repeat(80)),
  msg('assistant', 'A'.repeat(120)),
  msg('user', 'u'.repeat(8)),
  msg('assistant', 'a'.repeat(4)),
], { record: { tool_schemas: [bigSchema] } }));
add('shares of T: turn 0 holds only the schema when the first message is P-USER', gen([
  msg('user', 'first'), msg('assistant', 'reply text here'),
], { record: { tool_schemas: ['lookup(city: string) -> weather report'] } }));
add('shares of T: an empty schema section is included in turn 0 with nothing', gen([
  msg('assistant', 'greeting'), msg('user', 'q'), msg('assistant', 'answer'),
], { record: { tool_schemas: [] } }));
add('shares of T: anthropic tools and system before the first user message', env('anthropic-messages', {
  system: 'You answer briefly.',
  tools: [{ name: 'calc', description: 'adds numbers', input_schema: { type: 'object', properties: { a: { type: 'number' } } } }],
  messages: [{ role: 'user', content: 'add 2 and 3' }, { role: 'assistant', content: '5' }],
}));

// 2. Precedence decides the class: the role test fires whatever the kind names.
add('precedence: role user with an unlisted kind is P-USER, P-OTHER loses', gen([
  msg('user', 'annotated question', { kind: 'annotation' }),
  msg('assistant', 'answer'),
  msg('user', 'second question', { kind: 'annotation' }),
]));
add('precedence: P-USER outranks a P-ASST kind and starts a turn', gen([
  msg('system', 'rules'),
  msg('user', 'a user block labelled as reasoning', { kind: 'reasoning' }),
  msg('assistant', 'labelled as a user message', { kind: 'user_message' }),
  msg('assistant', 'plain answer', { kind: 'assistant_message' }),
]));
add('precedence: structural kinds outrank the role (conflicts recorded)', gen([
  msg('user', 'u'),
  msg('user', 'pasted tool output', { kind: 'tool_result' }),
  msg('system', 'summary of the session so far', { kind: 'summary' }),
  msg('tool', 'a tool message labelled as a system message', { kind: 'system_message' }),
  msg('narrator', 'unlisted role with a listed kind', { kind: 'user_message' }),
]));
add('precedence: letta-af user message with an unlisted message_type is P-USER', env('letta-af', { messages: [
  { role: 'system', message_type: 'system_message', content: 'sys' },
  { role: 'user', message_type: 'approval_response_message', content: 'approved' },
  { role: 'assistant', message_type: 'approval_request_message', content: 'approve?' },
  { role: 'user', content: [lt('plain user text')] },
] }));
add('precedence: anthropic unknown block types take the role class', env('anthropic-messages', [
  { role: 'user', content: [{ type: 'future_user_part', data: 'x' }, { type: 'text', text: 'question' }] },
  { role: 'assistant', content: [{ type: 'future_block_type' }, { type: 'text', text: 'answer' }] },
  { role: 'user', content: [{ type: 'document', source: { type: 'text', data: 'a user-attached document' } }] },
]));

// 3. Base64: each alphabet's maximal runs counted, figures per alphabet and in total.
add('base64: a run mixing + and - counts each alphabet', gen([
  msg('user', `${'A'.repeat(43)}+-${'B'.repeat(43)}`),
  msg('user', `mixed ${'Q'.repeat(43)}/_${'R'.repeat(43)} in prose that is long enough to stay text`),
  msg('user', `+${'A'.repeat(47)}-`),
  msg('user', `${'A'.repeat(44)}-${'A'.repeat(44)}`),
  msg('user', `/AAA-${'A'.repeat(42)}== padded url-safe piece`),
  msg('user', `${'A'.repeat(40)}-${'c'.repeat(3)}+${'d'.repeat(39)}`),
]));
add('base64: both alphabets qualify in one block with prose around', gen([
  msg('tool', `standard ${B64_40}${B64_40} url ${'x'.repeat(42)}-_ mixed ${'k'.repeat(39)}+_${'m'.repeat(39)} end`),
]));

// 4. Whitespace-only lines are empty lines in the raw-export log test.
add('log test: whitespace-only lines are not non-empty lines', gen([
  msg('user', '2026-01-01 10:00:00 a\n   \n2026-01-01 10:00:01 b\n\t\n2026-01-01 10:00:02 c\n\u3000\u00a0\n2026-01-01 10:00:03 d'),
  msg('user', '2026-01-01 10:00:00 a\n2026-01-01 10:00:01 b\n2026-01-01 10:00:02 c\nnote\n  \n \t '),
  msg('user', '2026-01-01 10:00:00 a\n2026-01-01 10:00:01 b\n2026-01-01 10:00:02 c\n2026-01-01 10:00:03 d\n\u200b\n\u200b'),
  msg('user', '2026-01-01 10:00:00 a\r\n \r\n2026-01-01 10:00:01 b\r \r2026-01-01 10:00:02 c\u0085\n2026-01-01 10:00:03 d'),
]));

// 6. Request numbers at 2^32 - 1, 2^32 and 2^53 - 1 never wrap; sums of stated figures stay exact.
add('numbers: stated counts at 2^32 - 1, 2^32 and 2^53 - 1', gen([
  msg('user', 'a'.repeat(40)), msg('assistant', 'b'.repeat(40)), msg('user', 'c'.repeat(40)),
], { env: { harness_stated_counts: { per_message: [4294967295, 4294967296, 9007199254740991], total: 9007199254740991 } } }));
add('numbers: record stated_tokens at 2^32 and stated_total at 2^53 - 1', gen([
  msg('user', 'x'.repeat(17), { stated_tokens: 4294967296 }), msg('assistant', 'y', { stated_tokens: 4294967295 }),
], { record: { stated_total: 9007199254740991 } }));
add('numbers: stated count 2^53 is refused', gen([msg('user', 'x')], { env: { harness_stated_counts: { total: 9007199254740992 } } }));
add('numbers: record stated_tokens 2^53 does not parse', gen([msg('user', 'x', { stated_tokens: 9007199254740992 })]));
add('numbers: stated sum past 2^64 stays exact', `{"envelope_version":"${V}","declared_format_id":"generic-message-list","record":{"messages":[${FILL}{"role":"user","text":"end","stated_tokens":9007199254740991}]}}`,
  { body_fill: { char: '{"role":"user","text":"x","stated_tokens":9007199254740991},', count: 2050 } });
// A raw body, so array-index keys can follow other keys as submitted (compact JSON puts keys up to
// 2^32 - 2 first in ascending order; 2^32 - 1 and above keep their place).
add('numbers: integer-like keys around 2^32 in compact JSON', `{"envelope_version":"${V}","declared_format_id":"generic-message-list","record":{"messages":[{"role":"user","text":"use the tools"}],"tool_schemas":[`
  + '{"4294967296":"a","4294967295":"b","4294967294":"c","9007199254740991":"d","1":"e"},'
  + '{"4294967295":"b","4294967296":"a","9007199254740991":"d","1":"e","4294967294":"c"},'
  + '{"z":0,"4294967294":"c","1":"e","4294967296":"a","4294967295":"b","9007199254740991":"d"},'
  + '{"n":[4294967295,4294967296,9007199254740991,9007199254740993,18446744073709551616,4294967296.0,1e2]}]}}');

// ------------------------------------------------------------------ derive expectations
function bodyBytes(c) {
  if (c.body_base64 !== undefined) return Buffer.from(c.body_base64, 'base64');
  let s = c.body;
  if (c.body_fill) s = s.replace(FILL, c.body_fill.char.repeat(c.body_fill.count));
  return Buffer.from(s, 'utf8');
}

const BASE_MS = 1764680000000;
const out = cases.map((c, i) => {
  const item = { name: c.name, provenance: 'synthetic: authored in gen-corpus.mjs', now_ms: BASE_MS + i * 1000 + 7, ...c };
  if (item.body === null) delete item.body;
  delete item.name;
  const named = { name: c.name, ...item };
  let req;
  try {
    req = ref.parse(bodyBytes(c));
  } catch (e) {
    if (!e.code) throw e;
    named.expect = { refusal: { code: e.code, status: e.status } };
    return named;
  }
  const audit = ref.audit(req, named.now_ms, criteria);
  named.expect = { precheck: ref.precheck(req, named.now_ms, criteria), audit };
  return named;
});

const corpus = {
  id: 'context-composition-corpus/v1',
  criteria_id: 'context-composition/v1',
  criteria_revision: '1.0.0',
  provenance: 'Every case is a synthetic record authored in gen-corpus.mjs; no real session or context record is used. Expected outputs are derived by reference.mjs, an independent JavaScript reading of the criteria text. A case body is the exact request body: body (UTF-8), or body_base64 (raw bytes); body_fill replaces the one @@FILL@@ in body with char repeated count times.',
  cases: out,
};
corpus.sha256 = createHash('sha256').update(ref.jcs(corpus)).digest('hex');
// One case per line keeps the file reviewable and diffable without inflating it.
const head = JSON.stringify({ ...corpus, cases: [], sha256: undefined }).replace(/,"cases":\[\]\}$/, '');
writeFileSync(join(here, 'corpus.json'),
  `${head},"cases":[\n${out.map((c) => JSON.stringify(c)).join(',\n')}\n],"sha256":"${corpus.sha256}"}\n`);
const refusals = out.filter((c) => c.expect.refusal).length;
const cnm = out.filter((c) => c.expect.audit?.status === 422).length;
console.log(`${out.length} cases (${refusals} refusals, ${cnm} could-not-measure, ${out.length - refusals - cnm} measured); sha256 ${corpus.sha256}`);

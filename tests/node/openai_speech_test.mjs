// Drives POST /v1/audio/speech with the official `openai` npm client, unmodified except for the
// base URL, for every response format, SSE streaming and error surfacing (SPEC 4.16).
// Env: IMAGO_URL (http://127.0.0.1:PORT), IMAGO_API_SECRET. Exit status 0 only if all pass.
import OpenAI from 'openai';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const base = process.env.IMAGO_URL;
const secret = process.env.IMAGO_API_SECRET;
if (!base || !secret) {
  console.error('IMAGO_URL and IMAGO_API_SECRET are required');
  process.exit(2);
}
const client = new OpenAI({ apiKey: secret, baseURL: `${base}/v1`, maxRetries: 0 });
const dir = mkdtempSync(join(tmpdir(), 'imago-openai-'));
let failures = 0;
const fail = (what) => { failures++; console.error(`FAIL: ${what}`); };

// Seconds of audio ffmpeg decodes from a file.
function decodedSeconds(file, inputOpts = []) {
  const pcm = execFileSync('ffmpeg', ['-v', 'error', ...inputOpts, '-i', file, '-f', 's16le', '-ac', '1', '-ar', '24000', '-'],
                           { maxBuffer: 64 << 20 });
  return pcm.length / 2 / 24000;
}

const input = 'The official client should work by changing only the base URL.';
const durations = {};
for (const [format, ext, opts] of [['mp3', 'mp3', []], ['opus', 'ogg', []], ['aac', 'aac', []], ['flac', 'flac', []],
                                   ['wav', 'wav', []], ['pcm', 'raw', ['-f', 's16le', '-ar', '24000', '-ac', '1']]]) {
  try {
    const res = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input, response_format: format });
    const buf = Buffer.from(await res.arrayBuffer());
    const file = join(dir, `out.${ext}`);
    writeFileSync(file, buf);
    durations[format] = decodedSeconds(file, opts);
    console.log(`${format}: ${buf.length} bytes, ${durations[format].toFixed(3)} s`);
  } catch (e) {
    fail(`${format}: ${e}`);
  }
}
const ref = durations.wav;
for (const [format, d] of Object.entries(durations)) {
  if (!(ref > 1) || Math.abs(d - ref) > 0.13) fail(`${format} decodes to ${d} s, wav to ${ref} s`);
}

// Our own voices and speed: F1, the voice behind alloy, so that only the speed differs from the
// reference (the built-in voices speak at different rates and on different engines).
try {
  const res = await client.audio.speech.create({ model: 'tts-1', voice: 'F1', input, response_format: 'wav', speed: 2.0 });
  const file = join(dir, 'fast.wav');
  writeFileSync(file, Buffer.from(await res.arrayBuffer()));
  const d = decodedSeconds(file);
  if (Math.abs(d * 2 / ref - 1) > 0.06) fail(`speed 2.0 gave ${d} s against ${ref} s`);
} catch (e) {
  fail(`voice F3 speed 2: ${e}`);
}

// SSE: speech.audio.delta events then speech.audio.done.
try {
  const res = await client.audio.speech.create({ model: 'gpt-4o-mini-tts', voice: 'nova', input: 'One. Two.',
                                                 response_format: 'mp3', stream_format: 'sse' });
  const text = await res.text();
  const events = text.split('\n\n').filter((b) => b.startsWith('data: ')).map((b) => JSON.parse(b.slice(6)));
  const deltas = events.filter((e) => e.type === 'speech.audio.delta');
  if (deltas.length < 1) fail('no speech.audio.delta events');
  if (events.at(-1)?.type !== 'speech.audio.done') fail('last event is not speech.audio.done');
  const file = join(dir, 'sse.mp3');
  writeFileSync(file, Buffer.concat(deltas.map((e) => Buffer.from(e.audio, 'base64'))));
  if (!(decodedSeconds(file) > 0.5)) fail('SSE audio does not decode');
} catch (e) {
  fail(`sse: ${e}`);
}

// Errors: the client must surface the server's message and status.
async function expectError(params, status, fragment) {
  try {
    await client.audio.speech.create(params);
    fail(`expected ${status} for ${JSON.stringify(params).slice(0, 80)}`);
  } catch (e) {
    if (!(e instanceof OpenAI.APIError)) return fail(`not an APIError: ${e}`);
    if (e.status !== status) fail(`status ${e.status}, expected ${status}`);
    if (!String(e.message).includes(fragment)) fail(`message "${e.message}" lacks "${fragment}"`);
    console.log(`error surfaced: ${e.status} ${e.message}`);
  }
}
await expectError({ model: 'tts-1', voice: 'alloy', input: 'x'.repeat(4097) }, 400, '4096');
await expectError({ model: 'tts-1', voice: 'nobody', input: 'hi' }, 400, "Field 'voice'");
await expectError({ model: 'tts-1', voice: 'alloy', input: 'hi', response_format: 'ogg' }, 400, 'response_format');
await expectError({ model: 'tts-1', voice: '00000000-0000-4000-8000-000000000000', input: 'hi' }, 404, 'Voice not found');
const bad = new OpenAI({ apiKey: 'not-a-key', baseURL: `${base}/v1`, maxRetries: 0 });
try {
  await bad.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'hi' });
  fail('a bad key was accepted');
} catch (e) {
  if (e.status !== 401) fail(`bad key gave ${e.status}`);
}

rmSync(dir, { recursive: true, force: true });
if (failures) {
  console.error(`${failures} failure(s)`);
  process.exit(1);
}
console.log('all OpenAI client checks passed');

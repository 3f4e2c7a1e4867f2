// Calls a running imagod through the generated client: create a key, upload a face, generate an
// agent and poll it to ready, synthesize speech, and mint a runtime token. Also checks that an
// error arrives as the typed envelope. Environment: IMAGO_URL, IMAGO_API_SECRET, IMAGO_FACE_JPEG.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createImagoClient } from '../src/index.js';

const baseUrl = process.env.IMAGO_URL!;
const apiSecret = process.env.IMAGO_API_SECRET!;
const face = process.env.IMAGO_FACE_JPEG ?? '/usr/share/doc/opencv-doc/opencv4/html/face_swapped.jpg';
assert.ok(baseUrl && apiSecret, 'IMAGO_URL and IMAGO_API_SECRET are required');

const client = createImagoClient({ baseUrl, apiSecret });

// A key made through the client, used for the rest.
const created = await client.POST('/v1/keys', { body: { alias: 'typescript-client' } });
assert.equal(created.response.status, 201, JSON.stringify(created.error));
const key = created.data!.data;
assert.match(key.api_secret, /^imago_sk_/);
const api = createImagoClient({ baseUrl, apiSecret: key.api_secret });
const valid = await api.POST('/v1/validate');
assert.equal(valid.data?.valid, true);

// Errors come back typed as the envelope.
const missing = await api.GET('/v1/agent/{code}', { params: { path: { code: 'no-such-agent' } } });
assert.equal(missing.response.status, 404);
assert.equal(missing.error?.error.code, 'NOT_FOUND');

const upload = await api.POST('/v1/files/upload', {
  body: { file_data: readFileSync(face).toString('base64'), file_name: 'face.jpg' },
});
assert.equal(upload.response.status, 200, JSON.stringify(upload.error));
const file = upload.data!.data;
assert.equal(file.file_type, 'image');

const gen = await api.POST('/v1/agent/generate', { body: { prompt: 'You are a typed guide.', image: file.id, model: 'essence' } });
assert.equal(gen.response.status, 200, JSON.stringify(gen.error));
assert.equal(gen.data!.status, 'processing');
const code = gen.data!.agent_id;

// Poll (the SPEC says every 5 s; a local test server finishes in seconds, so poll faster).
let status = '';
for (let i = 0; i < 600 && !['ready', 'success', 'failed'].includes(status); i++) {
  const st = await api.GET('/v1/agent/status/{agent_id}', { params: { path: { agent_id: code } } });
  assert.equal(st.response.status, 200, JSON.stringify(st.error));
  status = st.data!.data.status;
  if (!['ready', 'success', 'failed'].includes(status)) await new Promise((r) => setTimeout(r, 200));
}
assert.equal(status, 'ready');
const agent = await api.GET('/v1/agent/{code}', { params: { path: { code } } });
assert.ok(agent.data!.data.model_url.length > 0);

const tts = await api.POST('/v1/tts', { body: { text: 'Hello from the typed client.', voice: 'F2' }, parseAs: 'arrayBuffer' });
assert.equal(tts.response.status, 200, JSON.stringify(tts.error));
assert.equal(tts.response.headers.get('content-type'), 'audio/wav');
const wav = Buffer.from(tts.data as ArrayBuffer);
assert.equal(wav.subarray(0, 4).toString('latin1'), 'RIFF');

const token = await api.POST('/v1/runtime-tokens/request', { body: { agent_code: code } });
assert.equal(token.response.status, 200, JSON.stringify(token.error));
assert.equal(token.data!.data.token.split('.').length, 3);

console.log(`typescript client: key ${key.id}, agent ${code} ready, ${wav.length} bytes of speech, runtime token ok`);

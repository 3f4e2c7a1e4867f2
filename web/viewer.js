// The Imago viewer (docs/live-protocol.md): joins /v1/runtime/rooms/{room}?agent_code=CODE with the
// embed token from the URL fragment (#token=...&room=...&billing=...&media=...), decodes H.264 and
// Opus with WebCodecs where the browser has them (media-decoder.js; else JPEG pictures and PCM),
// draws the pictures on the canvas on the audio clock, plays the audio through an AudioWorklet, and
// reconnects to the same room after a drop.
(() => {
  'use strict';
  const agent = decodeURIComponent(location.pathname.split('/').filter(Boolean).pop() || '');
  const frag = new URLSearchParams(location.hash.slice(1));
  let token = frag.get('token') || '';
  const room = frag.get('room') || 'lobby';
  // voice_chat or camera_chat sessions (docs/live-protocol.md, "Billing"); empty: an avatar session.
  const billing = frag.get('billing') || '';
  // media=jpeg+pcm in the fragment keeps a browser with WebCodecs on the fallback (tests, debugging).
  const forcedMedia = (frag.get('media') || '').replace(' ', '+');  // a '+' reads as a space
  const canvas = document.getElementById('screen');
  const ctx2d = canvas.getContext('2d');
  const stateEl = document.getElementById('state');
  const textEl = document.getElementById('text');

  // Exposed for tests and curious operators.
  const stats = window.imagoViewer = {
    state: 'connecting', connects: 0, framesDrawn: 0, framesReceived: 0, audioChunks: 0,
    speakingChunks: 0, audioPlayed: 0, events: [], sessionId: null, lastError: null, media: null,
  };

  let ws = null, audio = null, player = null, audioPts = null, ended = false, retry = 0;
  let frames = [];   // decoded video frames waiting for their time: {pts, bitmap}
  let heartbeatTimer = null;
  let connectedAt = 0;  // performance.now() of the last connect, for stats.firstPictureMs

  // The media this page asks for: h264+opus where WebCodecs can decode it (decided before connecting).
  let encoded = false, decoder = null;
  const mediaChoice = (async () => {
    encoded = forcedMedia !== 'jpeg+pcm' && window.ImagoMediaDecoder && await window.ImagoMediaDecoder.supported();
    stats.media = encoded ? 'h264+opus' : 'jpeg+pcm';
    if (encoded) {
      decoder = window.ImagoMediaDecoder.create({
        picture: (frame) => {
          frames.push({ pts: frame.timestamp, bitmap: frame, w: frame.displayWidth, h: frame.displayHeight });
          stats.picturePts = frame.timestamp;
          // A decoder has few frames to lend: keep about half a second.
          if (frames.length > 12) frames.shift().bitmap.close();
        },
        audio: (pts, samples) => {
          if (player) player.port.postMessage({ pts, samples: samples.buffer, f32: true }, [samples.buffer]);
        },
        keyFrameNeeded: () => send({ type: 'request_key_frame' }),
        error: (m) => { stats.lastError = m; },
      });
      stats.decoder = decoder.stats;
    }
  })();

  function setState(s, detail) {
    stats.state = s;
    stateEl.textContent = s + (detail ? ' — ' + detail : '');
  }

  async function ensureAudio(rate) {
    if (audio && audio.sampleRate === rate) return;
    try {
      audio = new AudioContext({ sampleRate: rate });
      await audio.audioWorklet.addModule('/embed-assets/pcm-player.js');
      player = new AudioWorkletNode(audio, 'pcm-player', { outputChannelCount: [1] });
      player.connect(audio.destination);
      player.port.onmessage = (e) => {
        audioPts = e.data.pts; stats.audioPlayed = e.data.played; stats.audioPts = audioPts; stats.audioQueued = e.data.queued;
      };
      if (audio.state !== 'running') document.getElementById('sound').hidden = false;
    } catch (err) {
      stats.lastError = 'audio: ' + err;
      audio = null; player = null;
    }
  }
  document.getElementById('sound').onclick = async () => {
    if (audio) await audio.resume();
    document.getElementById('sound').hidden = true;
  };

  function header(buf) {
    const v = new DataView(buf);
    return { kind: v.getUint8(0), codec: v.getUint8(1), flags: v.getUint16(2, true), index: v.getUint32(4, true),
             pts: Number(v.getBigInt64(8, true)), a: v.getUint16(16, true), b: v.getUint16(18, true) };
  }

  async function onBinary(buf) {
    if (buf.byteLength < 20) return;
    const h = header(buf);
    if (decoder && (h.codec === 3 || h.codec === 2)) {  // H.264 or Opus (or their configurations)
      if (h.kind === 2 && !(h.flags & 16)) {
        stats.audioChunks++;
        if (h.flags & 1) stats.speakingChunks++;
      } else if (h.kind === 1 && !(h.flags & 16)) {
        stats.framesReceived++;
      }
      try { decoder.message(h, new Uint8Array(buf, 20)); } catch (err) { stats.lastError = 'decode: ' + err; }
      return;
    }
    if (h.kind === 2) {  // audio
      stats.audioChunks++;
      if (h.flags & 1) stats.speakingChunks++;
      if (player) player.port.postMessage({ pts: h.pts, samples: buf.slice(20) }, []);
    } else if (h.kind === 1 && h.codec === 1) {  // JPEG video
      stats.framesReceived++;
      try {
        const bitmap = await createImageBitmap(new Blob([new Uint8Array(buf, 20)], { type: 'image/jpeg' }));
        frames.push({ pts: h.pts, bitmap, w: bitmap.width, h: bitmap.height });
        if (frames.length > 50) frames.shift().bitmap.close();
      } catch (err) { stats.lastError = 'decode: ' + err; }
    }
  }

  function draw() {
    // The newest frame not later than the audio being heard; without running audio, the newest.
    const clockOk = audio && audio.state === 'running' && audioPts !== null;
    let pick = -1;
    for (let i = 0; i < frames.length; i++) {
      if (!clockOk || frames[i].pts <= audioPts + 20000) pick = i;
    }
    if (pick >= 0) {
      const f = frames[pick];
      if (canvas.width !== f.w || canvas.height !== f.h) {
        canvas.width = f.w; canvas.height = f.h;  // 16:9, 9:16 and 1:1 agents
      }
      ctx2d.drawImage(f.bitmap, 0, 0);
      stats.framesDrawn++;
      if (connectedAt) { stats.firstPictureMs = performance.now() - connectedAt; connectedAt = 0; }
      for (let i = 0; i < pick; i++) frames[i].bitmap.close();
      frames.splice(0, pick + 1);
    }
    requestAnimationFrame(draw);
  }
  requestAnimationFrame(draw);

  function onEvent(m) {
    stats.events.push(m.type);
    if (stats.events.length > 200) stats.events.shift();
    switch (m.type) {
      case 'session.started':
        stats.sessionId = m.session_id;
        retry = 0;
        ensureAudio(m.audio_rate);
        setState(m.state === 'paused' ? 'paused' : 'live', 'room ' + m.room_id);
        break;
      case 'session.paused': setState('paused', 'waiting for the token to be renewed'); break;
      case 'session.resumed': setState('live'); break;
      case 'session.ended':
        // A server shutting down is not the end of the conversation: come back (to this node
        // once it restarts, or to another behind the same address). Other reasons are final.
        ended = m.reason !== 'shutdown';
        setState('ended', m.reason);
        break;
      case 'playback_finished':
        if (m.interrupted && player) {
          player.port.postMessage({ flush: true });
          for (const f of frames) f.bitmap.close();
          frames = [];
        }
        break;
      case 'heartbeat.ok': token = m.token; break;
      case 'error': stats.lastError = m.code + ': ' + m.message; break;
      case 'transcript': caption(m); break;
      case 'agent.thinking': caption({ role: 'agent', text: '…', final: false, thinking: true }); break;
    }
  }

  // Captions: the last few turns. An agent turn grows sentence by sentence (final: false) and is
  // replaced by the whole answer as spoken (final: true).
  const captionsEl = document.getElementById('captions');
  const lines = [];  // {role, text, open}
  stats.captions = lines;
  function caption(m) {
    const last = lines[lines.length - 1];
    if (m.role === 'agent' && last && last.role === 'agent' && last.open) {
      if (m.thinking) return;
      last.text = m.final ? m.text : (last.thinking ? m.text : last.text + ' ' + m.text);
      last.thinking = false;
      last.open = !m.final;
    } else {
      lines.push({ role: m.role, text: m.text, open: m.role === 'agent' && !m.final, thinking: !!m.thinking });
      if (lines.length > 4) lines.shift();
    }
    captionsEl.replaceChildren(...lines.map((l) => {
      const d = document.createElement('div');
      d.className = l.role;
      d.textContent = (l.role === 'user' ? 'You: ' : 'Agent: ') + l.text;
      return d;
    }));
  }

  // The microphone: 16 kHz s16le chunks as binary messages; the server finds turns and barge-in.
  const micEl = document.getElementById('mic');
  let mic = null;  // {stream, ctx}
  stats.micChunks = 0;
  async function startMic() {
    try {
      const stream = await navigator.mediaDevices.getUserMedia({
        audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true, autoGainControl: true } });
      // A context at 16 kHz lets the browser resample the microphone with its own filtered
      // resampler; browsers that cannot connect a stream to a context of another rate (Firefox)
      // get one at the device rate, and mic-capture.js resamples.
      let ctx = new AudioContext({ sampleRate: 16000 });
      let source;
      try {
        source = ctx.createMediaStreamSource(stream);
      } catch (err) {
        ctx.close();
        ctx = new AudioContext();
        source = ctx.createMediaStreamSource(stream);
      }
      stats.micRate = ctx.sampleRate;
      await ctx.audioWorklet.addModule('/embed-assets/mic-capture.js');
      const node = new AudioWorkletNode(ctx, 'mic-capture');
      node.port.onmessage = (e) => {
        if (ws && ws.readyState === 1) { ws.send(e.data); stats.micChunks++; }
      };
      source.connect(node);
      mic = { stream, ctx };
      micEl.classList.add('on');
      if (audio && audio.state !== 'running') audio.resume();
    } catch (err) {
      stats.lastError = 'microphone: ' + err;
    }
  }
  function stopMic() {
    if (!mic) return;
    mic.stream.getTracks().forEach((t) => t.stop());
    mic.ctx.close();
    mic = null;
    micEl.classList.remove('on');
  }
  micEl.onclick = () => (mic ? stopMic() : startMic());

  // The camera, in camera_chat sessions: a 320x240 JPEG still every 2 s (and one just before a
  // typed message) as a camera_frame message; the server keeps the latest for the viewer's next
  // turn, so a higher rate would buy nothing.
  const camEl = document.getElementById('camera');
  const selfie = document.getElementById('selfie');
  camEl.hidden = billing !== 'camera_chat';
  let cam = null;  // {stream, timer}
  stats.cameraFrames = 0;
  const still = document.createElement('canvas');
  still.width = 320; still.height = 240;
  function grabFrame() {
    if (!cam || !selfie.videoWidth) return;
    // Cover the still, keeping the camera's aspect ratio.
    const k = Math.max(still.width / selfie.videoWidth, still.height / selfie.videoHeight);
    const w = selfie.videoWidth * k, h = selfie.videoHeight * k;
    still.getContext('2d').drawImage(selfie, (still.width - w) / 2, (still.height - h) / 2, w, h);
    // The server takes at most 48 KiB of JPEG (64,000 data-URL characters leave room for the message).
    let image = still.toDataURL('image/jpeg', 0.7);
    if (image.length > 64000) image = still.toDataURL('image/jpeg', 0.4);
    if (image.length > 64000) return;
    send({ type: 'camera_frame', image });
    stats.cameraFrames++;
  }
  async function startCamera() {
    try {
      const stream = await navigator.mediaDevices.getUserMedia({ video: { width: 320, height: 240 } });
      selfie.srcObject = stream;
      selfie.hidden = false;
      await selfie.play();
      cam = { stream, timer: setInterval(grabFrame, 2000) };
      camEl.classList.add('on');
      grabFrame();
    } catch (err) {
      stats.lastError = 'camera: ' + err;
    }
  }
  function stopCamera() {
    if (!cam) return;
    clearInterval(cam.timer);
    cam.stream.getTracks().forEach((t) => t.stop());
    selfie.srcObject = null;
    selfie.hidden = true;
    cam = null;
    camEl.classList.remove('on');
  }
  camEl.onclick = () => (cam ? stopCamera() : startCamera());

  async function connect() {
    if (!token || !agent) { setState('error', 'the page needs #token=<embed token>'); return; }
    await mediaChoice;
    if (decoder) decoder.reset();
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const url = `${proto}//${location.host}/v1/runtime/rooms/${encodeURIComponent(room)}?agent_code=${encodeURIComponent(agent)}` +
        (billing ? '&billing_type=' + encodeURIComponent(billing) : '') +
        (encoded ? '&media=' + encodeURIComponent('h264+opus') : '');
    stats.connects++;
    connectedAt = performance.now();
    for (const f of frames) f.bitmap.close();
    frames = [];
    ws = new WebSocket(url, ['imago.v1', 'bearer.' + token]);
    ws.binaryType = 'arraybuffer';
    ws.onmessage = (e) => {
      if (typeof e.data === 'string') { try { onEvent(JSON.parse(e.data)); } catch (err) { stats.lastError = '' + err; } }
      else onBinary(e.data);
    };
    ws.onclose = () => {
      clearInterval(heartbeatTimer);
      if (ended) return;
      // Dropped: come back to the same room, backing off up to 10 s.
      const delay = Math.min(10000, 250 * 2 ** retry++);
      setState('reconnecting', 'in ' + (delay / 1000).toFixed(1) + ' s');
      setTimeout(connect, delay);
    };
    clearInterval(heartbeatTimer);
    heartbeatTimer = setInterval(() => send({ type: 'heartbeat', token }), 60000);
  }

  function send(m) { if (ws && ws.readyState === 1) ws.send(JSON.stringify(m)); }
  function say() {
    const t = textEl.value.trim();
    if (!t) return;
    if (audio && audio.state !== 'running') audio.resume();
    grabFrame();  // the model sees what the camera shows as the question is asked
    send({ type: 'user_text', text: t });
    textEl.value = '';
  }
  document.getElementById('send').onclick = say;
  textEl.addEventListener('keydown', (e) => { if (e.key === 'Enter') say(); });
  document.getElementById('stop').onclick = () => send({ type: 'interrupt' });
  connect();
})();

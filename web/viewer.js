// The Imago viewer (docs/live-protocol.md, docs/embed.md): joins /v1/runtime/rooms/{room}?agent_code=CODE
// with the embed token from the URL fragment (#token=...&room=...&billing=...&media=...), decodes
// H.264 and Opus with WebCodecs where the browser has them (media-decoder.js; else JPEG pictures and
// PCM), draws the pictures on the canvas on the audio clock, plays the audio through an AudioWorklet,
// captions everything said, and reconnects to the same room after a drop. Without a token the page
// keeps its help text (web/embed.html) and connects to nothing.
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
  // ?origin=https://shop.example: a token restricted to that site (docs/embed.md). The server
  // served this page so that only that site may frame it (frame-ancestors); framed, the join says
  // which site it runs in; opened on its own, it cannot play and says why.
  const site = new URLSearchParams(location.search).get('origin') || '';
  const framed = window.top !== window.self;
  const $ = (id) => document.getElementById(id);
  if (agent && agent !== 'embed') $('help-agent').textContent = agent;
  if (!token || !agent) {
    window.imagoViewer = { state: 'no_token' };
    return;
  }
  $('help').hidden = true;
  $('viewer').hidden = false;
  const viewerEl = $('viewer');
  const stage = $('stage');
  const canvas = $('screen');
  const ctx2d = canvas.getContext('2d');
  const stateEl = $('state');
  const textEl = $('text');
  const activityEl = $('activity');
  const soundEl = $('sound');
  const muteEl = $('mute');

  // Exposed for tests and curious operators.
  const stats = window.imagoViewer = {
    state: 'connecting', connects: 0, framesDrawn: 0, framesReceived: 0, audioChunks: 0,
    speakingChunks: 0, audioPlayed: 0, events: [], sessionId: null, lastError: null, media: null,
  };

  let ws = null, audio = null, player = null, audioPts = null, ended = false, retry = 0;
  let frames = [];   // decoded video frames waiting for their time: {pts, bitmap}
  let heartbeatTimer = null;
  let connectedAt = 0;  // performance.now() of the last connect, for stats.firstPictureMs
  // performance.now() when the last connection's WebSocket opened, until its first decoded picture:
  // stats.openToFirstDecodedMs, the "join -> first decoded frame" as the page sees it.
  let openedAt = 0;

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
          if (openedAt) { stats.openToFirstDecodedMs = performance.now() - openedAt; openedAt = 0; }
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

  // The state line under the picture, in words.
  const STATE_WORDS = {
    connecting: 'Connecting…', live: 'Live', paused: 'Paused', ended: 'The session has ended',
    reconnecting: 'Connection lost, reconnecting', error: 'Error',
  };
  const END_WORDS = {
    left: 'everyone left', idle: 'nothing was said for a while', absent: 'nobody joined',
    max_duration: 'it reached its longest duration', insufficient_balance: 'the account is out of credits',
    terminated: 'its owner ended it', shutdown: 'the server restarted',
  };
  function setState(s, detail) {
    stats.state = s;
    stateEl.textContent = (STATE_WORDS[s] || s) + (detail ? ' — ' + detail : '');
    showActivity();
  }

  // Speaking / thinking / listening / ready: one badge over the picture.
  let speaking = 0, thinking = false;
  function showActivity() {
    let st, words;
    if (stats.state !== 'live') {
      st = stats.state === 'ended' ? 'ended' : 'connecting';
      words = stats.state === 'ended' ? 'Ended' : stats.state === 'paused' ? 'Paused' : 'Connecting';
    } else if (speaking > 0) { st = 'speaking'; words = 'Speaking'; }
    else if (thinking) { st = 'thinking'; words = 'Thinking'; }
    else if (mic) { st = 'listening'; words = 'Listening'; }
    else { st = 'ready'; words = 'Ready'; }
    stats.activity = st;
    if (activityEl.dataset.state !== st) { activityEl.dataset.state = st; activityEl.textContent = words; }
  }

  // Sound: browsers start audio only after a click on the page, so until it runs the picture
  // says "Sound is off" with a button; the bar's button mutes and unmutes.
  let gain = null, muted = false;
  function showSound() {
    const running = audio && audio.state === 'running';
    const off = !running || muted;
    stats.sound = off ? 'off' : 'on';
    soundEl.hidden = !audio || running;
    muteEl.textContent = off ? 'Unmute' : 'Mute';
    muteEl.setAttribute('aria-label', off ? 'Unmute: turn sound on' : 'Mute: turn sound off');
    muteEl.classList.toggle('muted', off);
  }
  async function soundOn() {
    muted = false;
    if (gain) gain.gain.value = 1;
    if (audio && audio.state !== 'running') { try { await audio.resume(); } catch (err) { stats.lastError = 'audio: ' + err; } }
    showSound();
  }
  soundEl.onclick = () => { soundOn(); textEl.focus(); };
  muteEl.onclick = () => {
    if (!audio || audio.state !== 'running' || muted) { soundOn(); return; }
    muted = true;
    if (gain) gain.gain.value = 0;
    showSound();
  };

  async function ensureAudio(rate) {
    if (audio && audio.sampleRate === rate) return;
    if (audio) audio.close();  // another rate after a reconnect: one context at a time
    try {
      audio = new AudioContext({ sampleRate: rate });
      audio.onstatechange = showSound;
      await audio.audioWorklet.addModule('/embed-assets/pcm-player.js');
      player = new AudioWorkletNode(audio, 'pcm-player', { outputChannelCount: [1] });
      gain = audio.createGain();
      gain.gain.value = muted ? 0 : 1;
      player.connect(gain).connect(audio.destination);
      player.port.onmessage = (e) => {
        audioPts = e.data.pts; stats.audioPlayed = e.data.played; stats.audioPts = audioPts; stats.audioQueued = e.data.queued;
      };
    } catch (err) {
      stats.lastError = 'audio: ' + err;
      audio = null; player = null; gain = null;
    }
    showSound();
  }

  // The stage takes the agent's aspect ratio (16:9, 9:16 or 1:1), as large as the window allows.
  function setAspect(w, h) {
    if (!w || !h) return;
    if (canvas.width !== w || canvas.height !== h) { canvas.width = w; canvas.height = h; }
    viewerEl.style.setProperty('--ar', String(w / h));
    stats.aspect = w / h;
    layout();
    // A frame's page may size the frame to fit (the dashboard does); only the shape is said.
    if (window.parent !== window) window.parent.postMessage({ type: 'imago.viewer.aspect', ratio: w / h }, '*');
  }

  // Captions under the picture when there is room for a few lines there, else over its bottom.
  function layout() {
    const free = window.innerHeight - stage.getBoundingClientRect().bottom - $('bar').offsetHeight - stateEl.offsetHeight - 24;
    const below = free >= 90 && !document.fullscreenElement;  // three lines or more
    viewerEl.classList.toggle('captions-below', below);
    if (below) viewerEl.style.setProperty('--below', Math.round(free) + 'px');
    stats.captionsBelow = below;
  }
  window.addEventListener('resize', layout);
  layout();

  const fsEl = $('fullscreen');
  if (!document.fullscreenEnabled) fsEl.hidden = true;  // a frame without allow="fullscreen"
  fsEl.onclick = () => {
    if (document.fullscreenElement) document.exitFullscreen();
    else viewerEl.requestFullscreen().catch((err) => { stats.lastError = 'fullscreen: ' + err; });
  };
  document.addEventListener('fullscreenchange', () => {
    const on = document.fullscreenElement === viewerEl;
    stats.fullscreen = on;
    fsEl.setAttribute('aria-label', on ? 'Exit full screen' : 'Full screen');
    fsEl.title = on ? 'Exit full screen' : 'Full screen';
    layout();
  });

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
      if (canvas.width !== f.w || canvas.height !== f.h) setAspect(f.w, f.h);
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
        speaking = 0;
        setAspect(m.width, m.height);
        ensureAudio(m.audio_rate);
        setState(m.state === 'paused' ? 'paused' : 'live');
        break;
      case 'session.paused': setState('paused', 'waiting for the token to be renewed'); break;
      case 'session.resumed': setState('live'); break;
      case 'session.ended':
        // A server shutting down is not the end of the conversation: come back (to this node
        // once it restarts, or to another behind the same address). Other reasons are final.
        ended = m.reason !== 'shutdown';
        setState('ended', END_WORDS[m.reason] || m.reason);
        if (ended) showEnded(END_WORDS[m.reason] || m.reason);
        break;
      case 'speech.started':
        speaking++;
        thinking = false;
        spoken(m);
        showActivity();
        break;
      case 'playback_finished':
        speaking = Math.max(0, speaking - 1);
        if (m.interrupted) {
          speaking = 0;
          if (player) player.port.postMessage({ flush: true });
          for (const f of frames) f.bitmap.close();
          frames = [];
        }
        showActivity();
        break;
      case 'heartbeat.ok': token = m.token; break;
      case 'error': stats.lastError = m.code + ': ' + m.message; showError(m); break;
      case 'transcript':
        if (m.role === 'agent') thinking = false;
        caption(m);
        showActivity();
        break;
      case 'agent.thinking':
        thinking = true;
        caption({ role: 'agent', text: '…', final: false, thinking: true });
        showActivity();
        break;
    }
  }

  // Errors the viewer can act on, in words; the rest only in stats.lastError.
  function showError(m) {
    const words = {
      RATE_LIMITED: 'Too many messages at once; wait a moment.',
      SPEECH_QUEUE_FULL: 'The agent has too much to say already; wait a moment.',
      SPEND_CAP_REACHED: 'The account reached its monthly live spend cap.',
      SPEECH_RECOGNITION_UNAVAILABLE: 'Speech recognition is not available on this server; type instead.',
      LLM_UNAVAILABLE: 'The agent could not answer just now.',
    }[m.code];
    if (words) stateEl.textContent = words;
  }

  // Captions: one area for everything said, the last few lines. The viewer's turns come as
  // `transcript` (role user). The agent's answers come as `transcript` sentences (final: false)
  // and are replaced by the whole answer as spoken (final: true). Text given to `speak` has its
  // transcript only once it has been played, so it is captioned from `speech.started` instead (an
  // answer's sentences also start speech: those are already on the open agent line).
  const captionsEl = $('captions');
  const lines = [];  // {role, text, open, thinking, spoken}
  stats.captions = lines;
  const MAX_LINES = 4;
  function addLine(l) {
    lines.push(l);
    if (lines.length > MAX_LINES) lines.shift();
  }
  function spoken(m) {
    const text = (m.text || '').trim();
    if (!text) return;
    const shownAlready = lines.some((l) => l.role === 'agent' && l.text.includes(text));
    if (shownAlready) return;
    const last = lines[lines.length - 1];
    if (last && last.role === 'agent' && last.thinking) lines.pop();
    addLine({ role: 'agent', text, open: false, thinking: false, spoken: true });
    drawCaptions();
  }
  function caption(m) {
    const last = lines[lines.length - 1];
    if (m.role === 'agent' && m.source === 'speak') {
      // Already captioned when it started playing, unless this viewer joined after that.
      if (!lines.some((l) => l.spoken && l.text === m.text)) spoken(m);
      return;
    }
    if (m.role === 'agent' && last && last.role === 'agent' && last.open) {
      if (m.thinking) return;
      last.text = m.final ? m.text : (last.thinking ? m.text : last.text + ' ' + m.text);
      last.thinking = false;
      last.open = !m.final;
    } else {
      addLine({ role: m.role, text: m.text, open: m.role === 'agent' && !m.final, thinking: !!m.thinking });
    }
    drawCaptions();
  }
  function drawCaptions() {
    captionsEl.replaceChildren(...lines.map((l) => {
      const d = document.createElement('div');
      d.className = 'line ' + l.role + (l.open ? ' open' : '');
      const who = document.createElement('span');
      who.className = 'who';
      who.textContent = l.role === 'user' ? 'You: ' : 'Agent: ';
      const t = document.createElement('span');
      t.className = 'text';
      t.textContent = l.text;
      d.append(who, t);
      return d;
    }));
  }

  // The microphone: 16 kHz s16le chunks as binary messages; the server finds turns and barge-in.
  const micEl = $('mic');
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
      micEl.setAttribute('aria-pressed', 'true');
      showActivity();
      if (audio && audio.state !== 'running') soundOn();  // the click that started the microphone
    } catch (err) {
      stats.lastError = 'microphone: ' + err;
    }
  }
  function stopMic() {
    if (!mic) return;
    mic.stream.getTracks().forEach((t) => t.stop());
    mic.ctx.close();
    mic = null;
    micEl.setAttribute('aria-pressed', 'false');
    showActivity();
  }
  micEl.onclick = () => (mic ? stopMic() : startMic());

  // The camera, in camera_chat sessions: a 320x240 JPEG still every 2 s (and one just before a
  // typed message) as a camera_frame message; the server keeps the latest for the viewer's next
  // turn, so a higher rate would buy nothing.
  $('voice-only').hidden = billing !== 'voice_chat';
  viewerEl.classList.toggle('voice', billing === 'voice_chat');  // a small frame: nothing to see
  layout();

  const camEl = $('camera');
  const selfie = $('selfie');
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
      camEl.setAttribute('aria-pressed', 'true');
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
    camEl.setAttribute('aria-pressed', 'false');
  }
  camEl.onclick = () => (cam ? stopCamera() : startCamera());

  async function connect() {
    await mediaChoice;
    if (decoder) decoder.reset();
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const url = `${proto}//${location.host}/v1/runtime/rooms/${encodeURIComponent(room)}?agent_code=${encodeURIComponent(agent)}` +
        (billing ? '&billing_type=' + encodeURIComponent(billing) : '') +
        (encoded ? '&media=' + encodeURIComponent('h264+opus') : '') +
        (site && framed ? '&embed_origin=' + encodeURIComponent(site) : '');
    stats.connects++;
    connectedAt = performance.now();
    for (const f of frames) f.bitmap.close();
    frames = [];
    openedAt = 0;
    stats.openToFirstDecodedMs = null;
    ws = new WebSocket(url, ['imago.v1', 'bearer.' + token]);
    ws.binaryType = 'arraybuffer';
    ws.onopen = () => { openedAt = performance.now(); };
    let joined = false;
    ws.onmessage = (e) => {
      if (typeof e.data === 'string') {
        joined = true; try { onEvent(JSON.parse(e.data)); } catch (err) { stats.lastError = '' + err; } }
      else onBinary(e.data);
    };
    ws.onclose = () => {
      clearInterval(heartbeatTimer);
      if (ended) return;
      // Dropped: come back to the same room, backing off up to 10 s.
      const delay = Math.min(10000, 250 * 2 ** retry++);
      // Refused before any message (the server says why only to the handshake, which a page cannot
      // read): most often a token that has expired or belongs to another agent.
      setState('reconnecting', (joined ? '' : 'could not join (has the token expired, or is it for another site?), ') +
               'trying again in ' + (delay / 1000).toFixed(1) + ' s');
      setTimeout(connect, delay);
    };
    clearInterval(heartbeatTimer);
    heartbeatTimer = setInterval(() => send({ type: 'heartbeat', token }), 60000);
  }

  // A final end: the controls rest, and "Start again" joins the room anew (a new session, while
  // the token is valid).
  const endedEl = $('ended');
  const controls = ['text', 'send', 'mic', 'camera', 'stop'].map($);
  function showEnded(why) {
    stopMic();
    stopCamera();
    $('ended-text').textContent = 'The session has ended' + (why ? ': ' + why : '') + '.';
    endedEl.hidden = false;
    controls.forEach((c) => { c.disabled = true; });
    $('again').focus();
  }
  $('again').onclick = () => {
    endedEl.hidden = true;
    controls.forEach((c) => { c.disabled = false; });
    ended = false;
    retry = 0;
    setState('connecting');
    connect();
    textEl.focus();
  };

  function send(m) { if (ws && ws.readyState === 1) ws.send(JSON.stringify(m)); }
  function say() {
    const t = textEl.value.trim();
    if (!t) return;
    if (audio && audio.state !== 'running') soundOn();  // a click or Enter lets audio start
    grabFrame();  // the model sees what the camera shows as the question is asked
    send({ type: 'user_text', text: t });
    textEl.value = '';
  }
  $('bar').addEventListener('submit', (e) => { e.preventDefault(); say(); });
  $('stop').onclick = () => send({ type: 'interrupt' });
  if (site && !framed) {
    stats.lastError = 'origin';
    setState('ended', `this viewer plays only inside a frame on ${site}`);
    showEnded(`it plays only inside a frame on ${site} (the token is restricted to that site)`);
    $('again').hidden = true;
    return;
  }
  connect();
})();

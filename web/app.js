// The page's one script: speaks over the WebSocket route and plays the PCM as it arrives with Web
// Audio (each frame scheduled right after the one before), shows the time to first audio and a
// live level and waveform, types text in pieces with append/flush, stops with cancel, and saves a
// file in any format through the OpenAI-compatible route. Plain browser JavaScript: no build step.

const SAMPLE_RATE = 24000; // Kokoro's rate: the WebSocket route's pcm default
const PEAK_SAMPLES = 480; // one waveform column per 20 ms of audio
const PIECE_INTERVAL_MS = 60; // typed mode: one append this often, as an LLM streams tokens
const OPENAI_FORMATS = ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'];

const $ = (id) => document.getElementById(id);
const el = {
  server: $('server'),
  text: $('text'),
  pause: $('pause'),
  pauseLength: $('pause-length'),
  pronunciations: $('pronunciations'),
  voice: $('voice'),
  speed: $('speed'),
  speedValue: $('speed-value'),
  speak: $('speak'),
  stop: $('stop'),
  format: $('format'),
  download: $('download'),
  tokenRow: $('token-row'),
  token: $('token'),
  typed: $('typed'),
  ttfa: $('ttfa'),
  frames: $('frames'),
  received: $('received'),
  level: $('level'),
  wave: $('wave'),
  status: $('status'),
  file: $('file'),
  player: $('player'),
  save: $('save'),
};

/** One spoken request: what the meters show. */
let current = null;
let socket = null;
let audio = null; // { context, analyser, nextTime, sources }
let typing = null;
let requestCount = 0;

function setStatus(text, kind = '') {
  el.status.textContent = text;
  el.status.className = kind || 'muted';
}

function token() {
  return el.token.value.trim();
}

function authHeaders() {
  return token() ? { authorization: `Bearer ${token()}` } : {};
}

function base64url(text) {
  const bytes = new TextEncoder().encode(text);
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

// ---- what the server offers -------------------------------------------------------------------

async function loadServer() {
  try {
    const ping = await (await fetch('/ping')).json();
    el.server.textContent =
      ping.status === 'healthy'
        ? `${ping.provider} · ${ping.dtype} · ${ping.workers} worker${ping.workers === 1 ? '' : 's'} · ${ping.voices} voices`
        : `server is ${ping.status}`;
    const formats = OPENAI_FORMATS.filter((f) => (ping.formats ?? OPENAI_FORMATS).includes(f));
    el.format.replaceChildren(...formats.map((f) => new Option(f, f)));
  } catch (err) {
    el.server.textContent = `cannot reach the server: ${err.message}`;
  }
}

async function loadVoices() {
  const res = await fetch('/v1/audio/voices', { headers: authHeaders() });
  if (res.status === 401) {
    el.tokenRow.hidden = false;
    setStatus('This server needs its API token: enter it above.', 'error');
    return;
  }
  const listing = await res.json();
  const groups = new Map();
  for (const voice of listing.data.filter((v) => v.supported)) {
    if (!groups.has(voice.language)) groups.set(voice.language, []);
    groups.get(voice.language).push(voice);
  }
  el.voice.replaceChildren(
    ...[...groups].map(([language, voices]) => {
      const group = document.createElement('optgroup');
      group.label = language;
      for (const v of voices) {
        const alias = v.aliases.length > 0 ? ` · OpenAI ${v.aliases.join(', ')}` : '';
        group.append(new Option(`${v.name} (${v.id}, ${v.gender})${alias}`, v.id));
      }
      return group;
    }),
  );
  el.voice.value = listing.default_voice;
  if (token()) sessionStorage.setItem('kokoro-token', token());
  setStatus('ready');
}

// ---- playback ---------------------------------------------------------------------------------

function ensureAudio() {
  if (!audio) {
    const context = new AudioContext();
    const analyser = context.createAnalyser();
    analyser.fftSize = 1024;
    analyser.connect(context.destination);
    audio = { context, analyser, nextTime: 0, sources: new Set() };
    requestAnimationFrame(draw);
  }
  if (audio.context.state === 'suspended') void audio.context.resume();
  return audio;
}

/** Schedules one frame of PCM16 right after the audio already scheduled. */
function play(bytes) {
  const { context, analyser } = ensureAudio();
  const samples = new Int16Array(bytes, 0, bytes.byteLength >> 1);
  const buffer = context.createBuffer(1, samples.length, SAMPLE_RATE);
  const channel = buffer.getChannelData(0);
  for (let i = 0; i < samples.length; i++) channel[i] = samples[i] / 32768;
  const source = context.createBufferSource();
  source.buffer = buffer;
  source.connect(analyser);
  // A small lead on the first frame, so that it is not clipped by the scheduling delay.
  const start = Math.max(context.currentTime + 0.03, audio.nextTime);
  if (current && current.playStart === undefined) current.playStart = start;
  source.start(start);
  audio.nextTime = start + buffer.duration;
  audio.sources.add(source);
  source.onended = () => {
    audio.sources.delete(source);
    if (audio.sources.size === 0 && !busy()) el.stop.disabled = true;
  };
  if (current) {
    for (let i = 0; i < samples.length; i += PEAK_SAMPLES) {
      let peak = 0;
      for (let j = i; j < Math.min(i + PEAK_SAMPLES, samples.length); j++)
        peak = Math.max(peak, Math.abs(channel[j]));
      current.peaks.push(peak);
    }
  }
}

function silence() {
  if (!audio) return;
  for (const source of audio.sources) source.stop();
  audio.sources.clear();
  audio.nextTime = 0;
}

/** The waveform of what arrived (played part darker) and the live level, every animation frame. */
function draw() {
  requestAnimationFrame(draw);
  const canvas = el.wave;
  const g = canvas.getContext('2d');
  const { width, height } = canvas;
  g.clearRect(0, 0, width, height);
  g.fillStyle = '#f3f1ec';
  g.fillRect(0, 0, width, height);
  if (audio) {
    const data = new Float32Array(audio.analyser.fftSize);
    audio.analyser.getFloatTimeDomainData(data);
    let sum = 0;
    for (const x of data) sum += x * x;
    el.level.value = Math.min(1, Math.sqrt(sum / data.length) * 4);
  }
  if (!current || current.peaks.length === 0) return;
  const columns = current.peaks.length;
  const step = Math.min(3, width / columns);
  const played =
    audio && current.playStart !== undefined
      ? Math.max(0, ((audio.context.currentTime - current.playStart) * SAMPLE_RATE) / PEAK_SAMPLES)
      : 0;
  const mid = height / 2;
  for (let i = 0; i < columns; i++) {
    const h = Math.max(1, current.peaks[i] * (height - 8));
    g.fillStyle = i < played ? '#1f5f8b' : '#9cc3dc';
    g.fillRect(i * step, mid - h / 2, Math.max(1, step - 1), h);
  }
}

// ---- the WebSocket session --------------------------------------------------------------------

function connect() {
  if (socket && socket.readyState === WebSocket.OPEN) return Promise.resolve(socket);
  const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/invocations-bidirectional-stream`;
  const ws = token()
    ? new WebSocket(url, ['kokoro-tts', `bearer.${base64url(token())}`])
    : new WebSocket(url);
  ws.binaryType = 'arraybuffer';
  ws.onmessage = (event) =>
    typeof event.data === 'string' ? onControl(JSON.parse(event.data)) : onAudio(event.data);
  ws.onclose = (event) => {
    socket = null;
    if (busy())
      finish(`The session closed (${event.code}${event.reason ? `: ${event.reason}` : ''})`, 'error');
  };
  socket = ws;
  return new Promise((resolve, reject) => {
    ws.onopen = () => resolve(ws);
    ws.onerror = () => reject(new Error('the WebSocket did not open (is the token right?)'));
  });
}

function busy() {
  return current !== null && !current.done;
}

function onAudio(bytes) {
  if (!current || current.done || current.cancelled) return;
  if (current.firstAt === undefined) {
    current.firstAt = performance.now();
    el.ttfa.textContent = `${Math.round(current.firstAt - current.sentAt)} ms`;
  }
  current.frames += 1;
  current.samples += bytes.byteLength >> 1;
  el.frames.textContent = String(current.frames);
  el.received.textContent = `${(current.samples / SAMPLE_RATE).toFixed(2)} s`;
  play(bytes);
}

function onControl(message) {
  if (
    !current ||
    (message.request_id && message.request_id !== current.id && message.type !== 'synthesis_cancelled')
  )
    return;
  switch (message.type) {
    case 'synthesis_start':
      setStatus('speaking…');
      break;
    case 'mark':
      current.marks++;
      break;
    case 'synthesis_complete':
      finish(
        `done: ${message.total_duration_s.toFixed(2)} s of audio in ${message.chunks} chunk${message.chunks === 1 ? '' : 's'}; the server sent the first audio ${Math.round(message.time_to_first_audio_s * 1000)} ms after the text arrived` +
          (current.marks > 0 ? `; ${current.marks} mark${current.marks === 1 ? '' : 's'}` : '') +
          (message.warnings ? `; warnings: ${message.warnings.join(' ')}` : ''),
        'ok',
      );
      break;
    case 'synthesis_cancelled':
      finish('stopped: the server cut the speech and dropped the rest', 'muted');
      break;
    case 'error':
      finish(`error (${message.code}): ${message.message}`, 'error');
      break;
  }
}

function finish(text, kind) {
  stopTyping();
  if (current) current.done = true;
  el.speak.disabled = false;
  if (!audio || audio.sources.size === 0) el.stop.disabled = true;
  setStatus(text, kind);
}

function stopTyping() {
  if (typing) clearInterval(typing);
  typing = null;
}

/** Words with their trailing space, two or three at a time: the pieces an LLM would stream. */
function pieces(text) {
  const words = text.match(/\S+\s*/g) ?? [];
  const out = [];
  for (let i = 0; i < words.length; ) {
    const n = 1 + (i % 3);
    out.push(words.slice(i, i + n).join(''));
    i += n;
  }
  return out;
}

/** Puts `[pause:…]` where the cursor is in the text. */
function insertPause() {
  const mark = `[pause:${el.pauseLength.value}]`;
  const { selectionStart: start, selectionEnd: end, value } = el.text;
  const before = value.slice(0, start);
  const after = value.slice(end);
  const spaced = `${before === '' || /\s$/.test(before) ? '' : ' '}${mark}${/^\s/.test(after) ? '' : ' '}`;
  el.text.value = before + spaced + after;
  el.text.selectionStart = el.text.selectionEnd = start + spaced.length;
  el.text.focus();
}

/**
 * The pronunciations field as a request's `pronunciations`: `word = /phonemes/` or
 * `word = alias`, one per line. Undefined when empty; throws naming a line without `=`.
 */
function pronunciations() {
  const entries = {};
  el.pronunciations.value.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    const at = line.indexOf('=');
    if (at < 0) throw new Error(`Pronunciations, line ${i + 1}: write "word = /phonemes/" or "word = alias"`);
    const word = line.slice(0, at).trim();
    const reading = line.slice(at + 1).trim();
    const phonemes = /^\/(.+)\/$/.exec(reading);
    entries[word] = phonemes ? { phonemes: phonemes[1] } : { alias: reading };
  });
  return Object.keys(entries).length > 0 ? entries : undefined;
}

async function speak() {
  const text = el.text.value;
  if (text.trim() === '') {
    setStatus('Type something to speak first.', 'error');
    return;
  }
  let entries;
  try {
    entries = pronunciations();
  } catch (err) {
    setStatus(err.message, 'error');
    return;
  }
  let ws;
  try {
    ensureAudio();
    ws = await connect();
  } catch (err) {
    setStatus(err.message, 'error');
    return;
  }
  silence();
  const id = `page-${++requestCount}`;
  current = {
    id,
    sentAt: performance.now(),
    firstAt: undefined,
    frames: 0,
    samples: 0,
    peaks: [],
    marks: 0,
    done: false,
  };
  el.ttfa.textContent = '…';
  el.frames.textContent = '0';
  el.received.textContent = '0.00 s';
  el.speak.disabled = true;
  el.stop.disabled = false;
  const options = {
    request_id: id,
    voice: el.voice.value,
    speed: Number(el.speed.value),
    format: 'pcm',
    ...(entries ? { pronunciations: entries } : {}),
  };
  const mode = document.querySelector('input[name="mode"]:checked').value;
  if (mode === 'whole') {
    el.typed.textContent = '';
    setStatus('synthesizing…');
    ws.send(JSON.stringify({ text, ...options }));
    return;
  }
  // Typed in pieces: the first append opens the utterance with the options, the flush ends it.
  const queue = pieces(text);
  el.typed.textContent = '';
  setStatus(`typing ${queue.length} pieces…`);
  ws.send(JSON.stringify({ type: 'append', text: queue.shift(), ...options }));
  el.typed.textContent = text.slice(0, text.length - queue.join('').length);
  typing = setInterval(() => {
    if (queue.length === 0) {
      stopTyping();
      ws.send(JSON.stringify({ type: 'flush' }));
      return;
    }
    const piece = queue.shift();
    ws.send(JSON.stringify({ type: 'append', text: piece }));
    el.typed.textContent += piece;
  }, PIECE_INTERVAL_MS);
}

function stop() {
  stopTyping();
  silence();
  el.stop.disabled = true;
  if (busy() && socket) {
    current.cancelled = true;
    socket.send(JSON.stringify({ type: 'cancel' }));
    setStatus('stopping…');
  }
}

async function download() {
  const format = el.format.value;
  setStatus(`synthesizing a ${format} file…`);
  const res = await fetch('/v1/audio/speech', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...authHeaders() },
    body: JSON.stringify({
      model: 'kokoro',
      input: el.text.value,
      voice: el.voice.value,
      speed: Number(el.speed.value),
      response_format: format,
      ...(pronunciations() ? { pronunciations: pronunciations() } : {}),
    }),
  });
  if (!res.ok) {
    const body = await res.json().catch(() => ({}));
    setStatus(`error: ${body.error?.message ?? res.statusText}`, 'error');
    return;
  }
  const blob = await res.blob();
  const url = URL.createObjectURL(blob);
  el.file.hidden = false;
  el.player.hidden = format === 'pcm'; // headerless: nothing a browser can play
  el.player.src = format === 'pcm' ? '' : url;
  el.save.href = url;
  el.save.download = `speech.${format === 'pcm' ? 'pcm' : format}`;
  el.save.textContent = `save speech.${format} (${(blob.size / 1024).toFixed(1)} KiB)`;
  setStatus(`file ready: ${format}, ${(blob.size / 1024).toFixed(1)} KiB`, 'ok');
}

el.speed.addEventListener(
  'input',
  () => (el.speedValue.textContent = `${Number(el.speed.value).toFixed(2)}×`),
);
el.pause.addEventListener('click', insertPause);
el.speak.addEventListener('click', () => void speak());
el.stop.addEventListener('click', stop);
el.download.addEventListener('click', () => void download().catch((err) => setStatus(err.message, 'error')));
el.token.addEventListener('change', () => void loadVoices());
el.token.value = sessionStorage.getItem('kokoro-token') ?? '';

await loadServer();
await loadVoices();

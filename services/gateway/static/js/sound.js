// @ts-check
// Short synthesized sounds (Web Audio, no audio files) and the mute switch.

/** @type {AudioContext | null} */
let ctx = null;
let muted = false;

/** @param {boolean} value */
export function setMuted(value) {
  muted = Boolean(value);
}

export function isMuted() {
  return muted;
}

function audio() {
  if (muted) return null;
  /** @type {typeof AudioContext | undefined} */
  const Ctor = globalThis.AudioContext || /** @type {any} */ (globalThis).webkitAudioContext;
  if (!Ctor) return null;
  if (!ctx) ctx = new Ctor();
  if (ctx.state === "suspended") ctx.resume().catch(() => {});
  return ctx;
}

/**
 * One note of a sound: frequency (Hz, or [from, to] for a sweep), start and length (s).
 * @typedef {{ freq: number | number[], start?: number, length?: number, type?: OscillatorType, gain?: number }} Note
 */

/** One enveloped oscillator note. @param {AudioContext} ac @param {Note} note */
function note(ac, { freq, start = 0, length = 0.12, type = "sine", gain = 0.18 }) {
  const t0 = ac.currentTime + start;
  const osc = ac.createOscillator();
  const amp = ac.createGain();
  osc.type = type;
  const [from, to] = Array.isArray(freq) ? freq : [freq, freq];
  osc.frequency.setValueAtTime(from, t0);
  if (to !== from) osc.frequency.exponentialRampToValueAtTime(to, t0 + length);
  amp.gain.setValueAtTime(0.0001, t0);
  amp.gain.exponentialRampToValueAtTime(gain, t0 + 0.008);
  amp.gain.exponentialRampToValueAtTime(0.0001, t0 + length);
  osc.connect(amp).connect(ac.destination);
  osc.start(t0);
  osc.stop(t0 + length + 0.02);
}

/** @type {Record<string, Note[]>} */
const SOUNDS = {
  draw: [{ freq: [900, 500], length: 0.07, type: "triangle", gain: 0.12 }],
  place: [
    { freq: [220, 140], length: 0.11, type: "triangle", gain: 0.25 },
    { freq: 1400, start: 0.005, length: 0.03, type: "square", gain: 0.03 },
  ],
  turn: [
    { freq: 660, length: 0.16, gain: 0.14 },
    { freq: 880, start: 0.11, length: 0.22, gain: 0.14 },
  ],
  tick: [{ freq: 1200, length: 0.04, type: "square", gain: 0.03 }],
  error: [{ freq: [180, 120], length: 0.2, type: "sawtooth", gain: 0.07 }],
  round: [523, 659, 784].map((f, i) => ({ freq: f, start: i * 0.1, length: 0.25, gain: 0.13 })),
  win: [523, 659, 784, 1047].map((f, i) => ({ freq: f, start: i * 0.12, length: 0.4, gain: 0.14 })),
};

/** Play sound `name` (draw, place, turn, tick, error, round, win), unless muted. @param {string} name */
export function play(name) {
  const ac = audio();
  const parts = SOUNDS[name];
  if (!ac || !parts) return;
  try {
    for (const p of parts) note(ac, p);
  } catch {
    /* a browser without full Web Audio: stay silent */
  }
}

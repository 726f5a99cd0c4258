// The diffsoro viewer (src/view/page.js): draws the run embedded in the page (the JSON of
// element #run-data, written by src/view/page.rs) with three.js. Lengths in m, times in s.
import * as THREE from 'three';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';

const run = JSON.parse(document.getElementById('run-data').textContent);

/** The little-endian array of type `Type` whose bytes are base64 `text`. */
function decode(text, Type) {
  const s = atob(text);
  const bytes = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) bytes[i] = s.charCodeAt(i);
  return new Type(bytes.buffer);
}

// Viridis, sampled at five stops (sRGB): displacement 0 → dark purple, max → yellow.
const STOPS = [
  [0.267, 0.005, 0.329], [0.231, 0.322, 0.545], [0.129, 0.569, 0.549],
  [0.369, 0.788, 0.384], [0.993, 0.906, 0.144],
];
const tmp = new THREE.Color();
/** Writes the linear RGB of the colour of `t` ∈ [0, 1] at `out[3 i ..]`. */
function colour(t, out, i) {
  const x = Math.min(Math.max(t, 0), 1) * (STOPS.length - 1);
  const k = Math.min(Math.floor(x), STOPS.length - 2);
  const f = x - k;
  const [a, b] = [STOPS[k], STOPS[k + 1]];
  tmp.setRGB(a[0] + f * (b[0] - a[0]), a[1] + f * (b[1] - a[1]), a[2] + f * (b[2] - a[2]),
    THREE.SRGBColorSpace);
  out[3 * i] = tmp.r; out[3 * i + 1] = tmp.g; out[3 * i + 2] = tmp.b;
}

const view = document.getElementById('view');
let renderer;
try {
  renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
} catch (e) {
  view.textContent = `This browser could not start WebGL, which the viewer needs: ${e.message}`;
  throw e;
}
renderer.setPixelRatio(window.devicePixelRatio);
view.appendChild(renderer.domElement);
const scene = new THREE.Scene();
scene.background = new THREE.Color(0xf4f4f4);
scene.add(new THREE.AmbientLight(0xffffff, 1.2));
const sun = new THREE.DirectionalLight(0xffffff, 1.8);
scene.add(sun);

const uMax = run.displacementMax > 0 ? run.displacementMax : 1;
const bodies = run.bodies.map((b) => {
  const geometry = new THREE.BufferGeometry();
  geometry.setIndex(new THREE.BufferAttribute(decode(b.triangles, Uint32Array), 1));
  const frames = b.positions.map((p) => decode(p, Float32Array));
  const magnitudes = b.displacement.map((u) => decode(u, Float32Array));
  geometry.setAttribute('position', new THREE.BufferAttribute(frames[0].slice(), 3));
  const coloured = magnitudes.length > 0;
  if (coloured) {
    geometry.setAttribute('color',
      new THREE.BufferAttribute(new Float32Array(frames[0].length), 3));
  }
  const material = new THREE.MeshLambertMaterial({
    color: coloured ? 0xffffff : 0x9a9a9a, vertexColors: coloured, side: THREE.DoubleSide,
  });
  const mesh = new THREE.Mesh(geometry, material);
  scene.add(mesh);
  return { geometry, frames, magnitudes, coloured };
});

// The camera looks at the first frame's bounding box from the side, +y up (gravity is
// usually −y, so a sag shows as a downward motion on screen), and stays there.
const box = new THREE.Box3();
for (const b of bodies) {
  b.geometry.computeBoundingBox();
  box.union(b.geometry.boundingBox);
}
const centre = box.getCenter(new THREE.Vector3());
const radius = Math.max(box.getSize(new THREE.Vector3()).length() / 2, 1e-6);
const camera = new THREE.PerspectiveCamera(35, 1, radius / 100, radius * 100);
const distance = 1.15 * radius / Math.sin(THREE.MathUtils.degToRad(35 / 2));
camera.position.copy(centre).add(new THREE.Vector3(...run.cameraDirection).multiplyScalar(distance));
camera.lookAt(centre);
sun.position.copy(camera.position).add(new THREE.Vector3(0, radius * 2, 0));
const controls = new OrbitControls(camera, renderer.domElement);
controls.target.copy(centre);
controls.update();

const slider = document.getElementById('frame');
const label = document.getElementById('time');
slider.max = String(run.times.length - 1);

/** Shows frame `k`: positions, colours, slider and time label. */
function show(k) {
  for (const b of bodies) {
    const position = b.geometry.getAttribute('position');
    position.array.set(b.frames[k]);
    position.needsUpdate = true;
    if (b.coloured) {
      const color = b.geometry.getAttribute('color');
      const u = b.magnitudes[k];
      for (let i = 0; i < u.length; i++) colour(u[i] / uMax, color.array, i);
      color.needsUpdate = true;
    }
    b.geometry.computeVertexNormals();
    b.geometry.computeBoundingSphere();
  }
  slider.value = String(k);
  label.textContent = `t = ${run.times[k].toFixed(3)} s · frame ${k} of ${run.times.length - 1}`;
  render();
}

function resize() {
  const w = view.clientWidth, h = view.clientHeight;
  renderer.setSize(w, h);
  camera.aspect = w / h;
  camera.updateProjectionMatrix();
}

function render() {
  renderer.render(scene, camera);
}

/** The frame named by the URL fragment: `#frame=N` or `#frame=last` (default 0). */
function frameFromUrl() {
  const m = /frame=(last|\d+)/.exec(window.location.hash);
  const last = run.times.length - 1;
  if (!m) return 0;
  return m[1] === 'last' ? last : Math.min(Number(m[1]), last);
}

let playing = null;
const play = document.getElementById('play');
play.addEventListener('click', () => {
  if (playing !== null) {
    clearInterval(playing);
    playing = null;
    play.textContent = '▶ play';
    return;
  }
  play.textContent = '❚❚ pause';
  playing = setInterval(() => show((Number(slider.value) + 1) % run.times.length), 1000 / 30);
});
slider.addEventListener('input', () => show(Number(slider.value)));
controls.addEventListener('change', render);
window.addEventListener('resize', () => { resize(); render(); });
window.addEventListener('hashchange', () => show(frameFromUrl()));

resize();
show(frameFromUrl());
document.body.dataset.ready = 'true';

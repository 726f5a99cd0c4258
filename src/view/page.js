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

// The colouring: displacement magnitude (m) or von Mises stress (Pa), each from 0 to its
// largest value over the run (the colour bar's top).
const scales = {
  displacement: run.displacementMax > 0 ? run.displacementMax : 1,
  stress: run.stressMax > 0 ? run.stressMax : 1,
};
let colouring = 'displacement';
const bodies = run.bodies.map((b) => {
  const geometry = new THREE.BufferGeometry();
  geometry.setIndex(new THREE.BufferAttribute(decode(b.triangles, Uint32Array), 1));
  const frames = b.positions.map((p) => decode(p, Float32Array));
  const fields = {
    displacement: b.displacement.map((u) => decode(u, Float32Array)),
    stress: b.stress.map((v) => decode(v, Float32Array)),
  };
  geometry.setAttribute('position', new THREE.BufferAttribute(frames[0].slice(), 3));
  const coloured = fields.displacement.length > 0 || fields.stress.length > 0;
  if (coloured) {
    geometry.setAttribute('color',
      new THREE.BufferAttribute(new Float32Array(frames[0].length), 3));
  }
  const material = new THREE.MeshLambertMaterial({
    color: coloured ? 0xffffff : 0x9a9a9a, vertexColors: coloured, side: THREE.DoubleSide,
  });
  const mesh = new THREE.Mesh(geometry, material);
  scene.add(mesh);
  return { geometry, frames, fields, coloured };
});

// The camera looks at the first frame's bounding box from the side, −gravity up (page.rs:
// `up`, `camera_direction`), so a sag shows as a downward motion on screen, and stays there.
const box = new THREE.Box3();
for (const b of bodies) {
  b.geometry.computeBoundingBox();
  box.union(b.geometry.boundingBox);
}
const centre = box.getCenter(new THREE.Vector3());
const radius = Math.max(box.getSize(new THREE.Vector3()).length() / 2, 1e-6);
const camera = new THREE.PerspectiveCamera(35, 1, radius / 100, radius * 100);
const distance = 1.15 * radius / Math.sin(THREE.MathUtils.degToRad(35 / 2));
camera.up.set(...run.cameraUp);
camera.position.copy(centre).add(new THREE.Vector3(...run.cameraDirection).multiplyScalar(distance));
camera.lookAt(centre);
sun.position.copy(camera.position).addScaledVector(camera.up, radius * 2);
const controls = new OrbitControls(camera, renderer.domElement);
controls.target.copy(centre);
controls.update();

// What the run folder records beside the bodies (final.json, control.json): the obstacles,
// each effector's path over the frames and a control run's targets. Colours match the
// legend (page.rs). Paths and markers are drawn over everything (they are often inside a
// body); the obstacles are opaque and pushed back a little, so a surface resting on one
// shows in front of it.
const OBSTACLE = 0xc8a070, PATH = 0xe0201c, TARGET = 0x10a040;
const obstacleMaterial = new THREE.MeshLambertMaterial({
  color: OBSTACLE, side: THREE.DoubleSide,
  polygonOffset: true, polygonOffsetFactor: 1, polygonOffsetUnits: 1,
});
const Y = new THREE.Vector3(0, 1, 0), Z = new THREE.Vector3(0, 0, 1);
const vec = (a) => new THREE.Vector3(a[0], a[1], a[2]);

/** The geometry of obstacle `o` (its JSON in final.json), placed in the world (m). A plane
 * is drawn as a square of side 4 r (r: half the bodies' bounding-box diagonal) centred on
 * the bodies' centre projected onto it. */
function obstacleGeometry(o) {
  switch (o.type) {
    case 'plane': {
      const n = vec(o.normal).normalize();
      const g = new THREE.PlaneGeometry(4 * radius, 4 * radius);
      g.applyQuaternion(new THREE.Quaternion().setFromUnitVectors(Z, n));
      const at = centre.clone().addScaledVector(n, -centre.clone().sub(vec(o.point)).dot(n));
      return g.translate(at.x, at.y, at.z);
    }
    case 'box': {
      const [h, r, c] = [o.half_extents, o.rotation, o.center];
      const g = new THREE.BoxGeometry(2 * h[0], 2 * h[1], 2 * h[2]);
      return g.applyMatrix4(new THREE.Matrix4().set(
        r[0][0], r[0][1], r[0][2], c[0], r[1][0], r[1][1], r[1][2], c[1],
        r[2][0], r[2][1], r[2][2], c[2], 0, 0, 0, 1));
    }
    case 'sphere':
      return new THREE.SphereGeometry(o.radius, 32, 16).translate(...o.center);
    case 'capsule': {
      const [a, b] = [vec(o.start), vec(o.end)];
      const axis = b.clone().sub(a);
      const g = new THREE.CapsuleGeometry(o.radius, axis.length(), 8, 24);
      if (axis.length() > 0) {
        g.applyQuaternion(new THREE.Quaternion().setFromUnitVectors(Y, axis.normalize()));
      }
      const mid = a.add(b).multiplyScalar(0.5);
      return g.translate(mid.x, mid.y, mid.z);
    }
    case 'mesh': {
      const g = new THREE.BufferGeometry();
      g.setAttribute('position', new THREE.BufferAttribute(new Float32Array(o.vertices.flat()), 3));
      g.setIndex(o.triangles.flat());
      // One normal per face (flat shading): a mesh's shared vertices would smooth its edges.
      const flat = g.toNonIndexed();
      flat.computeVertexNormals();
      return flat;
    }
    default:
      return null;
  }
}
for (const o of run.obstacles) {
  const g = obstacleGeometry(o);
  if (g) scene.add(new THREE.Mesh(g, obstacleMaterial));
}

// Paths, markers and contact forces, shown or hidden together (the panel's checkbox,
// `paths=off` in the URL).
const overlays = new THREE.Group();
scene.add(overlays);

/** A marker of `colour` (an octahedron, 8 % of r across) drawn over everything. */
function marker(colour, at) {
  const m = new THREE.Mesh(new THREE.OctahedronGeometry(0.04 * radius),
    new THREE.MeshBasicMaterial({ color: colour, depthTest: false }));
  m.renderOrder = 2;
  m.position.copy(at);
  overlays.add(m);
  return m;
}
const effectors = run.effectors.map((e) => {
  const points = new Float32Array(e.path.flat());
  const line = new THREE.Line(
    new THREE.BufferGeometry().setAttribute('position', new THREE.BufferAttribute(points, 3)),
    new THREE.LineBasicMaterial({ color: PATH, depthTest: false }));
  line.renderOrder = 1;
  overlays.add(line);
  return { path: e.path, marker: marker(PATH, vec(e.path[0])) };
});
for (const t of run.targets) marker(TARGET, vec(t));

// Contact forces at the shown frame (the frames' `contact_force` field): an arrow from each
// touched node along the force on it (N), the largest force of the run 0.25 r long.
const FORCE = 0x1f5fd0;
const forces = new THREE.Group();
overlays.add(forces);
const forceLabel = document.getElementById('forces');

/** Draws the contact forces of frame `k` and writes their count and sum in the panel. */
function showForces(k) {
  for (const a of forces.children) a.dispose();
  forces.clear();
  if (run.contacts.length === 0) return;
  const sum = new THREE.Vector3();
  for (const c of run.contacts[k]) {
    const f = new THREE.Vector3(c[3], c[4], c[5]);
    sum.add(f);
    const length = f.length() / run.contactForceMax * 0.25 * radius;
    const arrow = new THREE.ArrowHelper(f.normalize(), vec(c), length, FORCE,
      0.3 * length, 0.15 * length);
    arrow.line.material.depthTest = false;
    arrow.cone.material.depthTest = false;
    arrow.renderOrder = 3;
    forces.add(arrow);
  }
  const n = run.contacts[k].length;
  forceLabel.textContent = `contact forces: ${n} node${n === 1 ? '' : 's'}, ` +
    `sum (${sum.toArray().map((x) => x.toExponential(3)).join(', ')}) N`;
}

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
      const u = b.fields[colouring][k];
      if (u) {
        const max = scales[colouring];
        for (let i = 0; i < u.length; i++) colour(u[i] / max, color.array, i);
      } else {
        color.array.fill(0.5);
      }
      color.needsUpdate = true;
    }
    b.geometry.computeVertexNormals();
    b.geometry.computeBoundingSphere();
  }
  for (const e of effectors) e.marker.position.set(...e.path[k]);
  showForces(k);
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

const pathsBox = document.getElementById('paths');
pathsBox.parentElement.hidden = overlays.children.length === 1 && run.contacts.length === 0;
/** Shows the paths, markers and forces as the URL says (`paths=off` hides them), else as the box. */
function pathsFromUrl() {
  pathsBox.checked = !/paths=off/.test(window.location.hash);
  overlays.visible = pathsBox.checked;
}
pathsBox.addEventListener('change', () => { overlays.visible = pathsBox.checked; render(); });

// The colouring menu (hidden when the frames carry no stress), and `colour=stress` in the URL.
const menu = document.getElementById('colouring');
menu.hidden = run.stressMax <= 0;
/** Colours the bodies by `mode` and labels the colour bar with its range. */
function setColouring(mode) {
  colouring = mode === 'stress' && run.stressMax > 0 ? 'stress' : 'displacement';
  menu.value = colouring;
  const max = colouring === 'stress' ? run.stressMax : run.displacementMax;
  document.getElementById('tick-max').textContent = max.toExponential(3);
  document.getElementById('tick-mid').textContent = (max / 2).toExponential(3);
}
menu.addEventListener('change', () => { setColouring(menu.value); show(Number(slider.value)); });

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
/** The colouring the URL names (`colour=stress`), else displacement. */
const colouringFromUrl = () => (/colou?r=stress/.test(window.location.hash) ? 'stress' : 'displacement');
window.addEventListener('hashchange', () => {
  pathsFromUrl();
  setColouring(colouringFromUrl());
  show(frameFromUrl());
});

resize();
pathsFromUrl();
setColouring(colouringFromUrl());
show(frameFromUrl());
document.body.dataset.ready = 'true';

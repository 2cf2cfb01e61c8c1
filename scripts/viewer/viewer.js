// The Daedalus run viewer (docs/viewer.md): plays a multibody run from the
// data scripts/view embeds in the page (#run-data), with three.js r111 from
// Debian's libjs-three (THREE, THREE.OrbitControls) inlined before it.
//
// The data: t[N]; frames[NF] and poses[N][7 NF] (x, y, z, qw, qx, qy, qz
// of every frame per sample, docs/output.md); bodies [{name, frame}] (the
// body's pose is its frame's); geometry [{body, type, size, pos, quat, rgba,
// visual, collision}] in the body's frame (the mechanism's own, or capsules
// between its frames that scripts/view made); trails (frame indices);
// columns and values (the run's CSV); plot (columns plotted at first);
// events [{name, t}]; overlays [{name, kind: points|arrows, data[N]}].
(function () {
  'use strict';
  const started = performance.now();  // the page reports its set-up time
  const D = JSON.parse(document.getElementById('run-data').textContent);
  const N = D.t.length;
  const NF = D.frames.length;
  const planar = D.dimension === 'planar';
  const params = new URLSearchParams(window.location.search);
  const $ = (id) => document.getElementById(id);

  // Position and orientation of frame f at sample i, from the poses rows.
  function framePosition(i, f, out) {
    const r = D.poses[i], k = 7 * f;
    return out.set(r[k], r[k + 1], r[k + 2]);
  }
  function frameQuaternion(i, f, out) {
    const r = D.poses[i], k = 7 * f;  // three.js takes (x, y, z, w)
    return out.set(r[k + 4], r[k + 5], r[k + 6], r[k + 3]);
  }

  // ---------------------------------------------------------------- scene
  const view = $('view');
  const renderer = new THREE.WebGLRenderer(
      {antialias: true, preserveDrawingBuffer: true});  // screenshots
  renderer.setPixelRatio(window.devicePixelRatio || 1);
  view.insertBefore(renderer.domElement, view.firstChild);
  const scene = new THREE.Scene();
  scene.background = new THREE.Color(0xf2f4f7);
  const camera = new THREE.PerspectiveCamera(35, 1, 0.01, 1000);
  const up = planar ? new THREE.Vector3(0, 1, 0) : new THREE.Vector3(0, 0, 1);
  camera.up.copy(up);
  const sky = new THREE.HemisphereLight(0xffffff, 0x8088a0, 0.7);
  sky.position.copy(up);
  scene.add(sky);
  const sun = new THREE.DirectionalLight(0xffffff, 0.55);
  sun.position.set(2, -3, 4);
  scene.add(sun);

  // The run's extent: every frame at (up to) 2000 samples.
  const box = new THREE.Box3();
  const v = new THREE.Vector3();
  const step = Math.max(1, Math.floor(N / 2000));
  for (let i = 0; i < N; i += step) {
    for (let f = 0; f < NF; ++f) box.expandByPoint(framePosition(i, f, v));
  }
  for (let f = 0; f < NF; ++f) box.expandByPoint(framePosition(N - 1, f, v));
  const size = Math.max(box.getSize(v).length(), 1e-3);
  const center = box.getCenter(new THREE.Vector3());

  // Ground: a grid of a round cell size in the x-y plane, at D.ground
  // (spatial runs) or just behind the mechanism (planar runs).
  function roundStep(x) {
    const e = Math.pow(10, Math.floor(Math.log10(x)));
    return x / e < 2 ? e : x / e < 5 ? 2 * e : 5 * e;
  }
  const cell = roundStep(size / 12);
  const cells = 2 * Math.ceil(0.9 * size / cell);
  const grid = new THREE.GridHelper(cells * cell, cells, 0x8890a0, 0xc8ccd4);
  grid.rotation.x = Math.PI / 2;  // GridHelper lies in x-z; turn to x-y
  grid.position.set(Math.round(center.x / cell) * cell,
                    Math.round(center.y / cell) * cell,
                    planar ? box.min.z - 0.02 * size : D.ground);
  scene.add(grid);
  const axes = new THREE.AxesHelper(cell);  // x red, y green, z blue
  axes.position.z = planar ? 0 : D.ground;
  scene.add(axes);

  // -------------------------------------------------------------- bodies
  const palette = [0x4e79a7, 0xf28e2b, 0xe15759, 0x76b7b2, 0x59a14f,
                   0xedc948, 0xb07aa1, 0xff9da7, 0x9c755f, 0x6b8fb8];
  // A capsule along z: a lathe (about y) of its outline, turned onto z.
  function capsuleGeometry(r, h) {
    const outline = [];
    for (let k = 0; k <= 8; ++k) {  // lower cap, then upper cap
      const a = -Math.PI / 2 + (k / 8) * (Math.PI / 2);
      outline.push(new THREE.Vector2(r * Math.cos(a), -h + r * Math.sin(a)));
    }
    for (let k = 0; k <= 8; ++k) {
      const a = (k / 8) * (Math.PI / 2);
      outline.push(new THREE.Vector2(r * Math.cos(a), h + r * Math.sin(a)));
    }
    return new THREE.LatheBufferGeometry(outline, 20).rotateX(Math.PI / 2);
  }
  // A mesh for one entry of the geometry array, or null (meshes).
  function geomMesh(g, color, collisionOnly) {
    const s = g.size || [];
    let geo;
    switch (g.type) {
      case 'sphere': geo = new THREE.SphereBufferGeometry(s[0], 24, 16); break;
      case 'ellipsoid':
        geo = new THREE.SphereBufferGeometry(1, 24, 16).scale(s[0], s[1], s[2]);
        break;
      case 'box':
        geo = new THREE.BoxBufferGeometry(2 * s[0], 2 * s[1], 2 * s[2]); break;
      case 'cylinder':
        geo = new THREE.CylinderBufferGeometry(s[0], s[0], 2 * s[1], 24)
                  .rotateX(Math.PI / 2);  // three.js's axis is y
        break;
      case 'capsule': geo = capsuleGeometry(s[0], s[1]); break;
      case 'plane':  // half-sizes, 0 meaning infinite (MuJoCo)
        geo = new THREE.PlaneBufferGeometry(2 * (s[0] || size),
                                            2 * (s[1] || size));
        break;
      default: return null;  // 'mesh': no mesh data in the run's files
    }
    const rgba = g.rgba || [0, 0, 0, 1];
    const alpha = collisionOnly ? 0.35 : (g.type === 'plane' ? 0.5 : rgba[3]);
    const material = new THREE.MeshPhongMaterial({
      color: g.rgba ? new THREE.Color(rgba[0], rgba[1], rgba[2]) : color,
      transparent: alpha < 1, opacity: alpha, shininess: 40,
      wireframe: collisionOnly, side: THREE.DoubleSide});
    const mesh = new THREE.Mesh(geo, material);
    const p = g.pos || [0, 0, 0], q = g.quat || [1, 0, 0, 0];
    mesh.position.set(p[0], p[1], p[2]);
    mesh.quaternion.set(q[1], q[2], q[3], q[0]);
    return mesh;
  }

  // One group per body, posed per sample; geometry in the body's frame.
  const bodyIndex = {};
  const bodyGroups = D.bodies.map((b, k) => {
    bodyIndex[b.name] = k;
    const group = new THREE.Group();
    scene.add(group);
    return group;
  });
  const collisionMeshes = [];
  let skipped = 0, visualCount = 0;
  D.geometry.forEach((g) => {
    const k = bodyIndex[g.body];
    const visual = g.visual !== false;
    if (!visual && g.collision === false) return;
    const color = g.joint ? 0x3a3f4b : palette[(k - 1 + 10) % 10];
    const mesh = geomMesh(g, color, !visual);
    if (!mesh) { ++skipped; return; }
    if (visual) ++visualCount; else collisionMeshes.push(mesh);
    bodyGroups[k].add(mesh);
  });

  // Small spheres at every frame (markers and joints), and the trails.
  const markerRadius = (D.radius || 0.004 * size) * 0.7;
  const markerGeo = new THREE.SphereBufferGeometry(markerRadius, 12, 8);
  const markerMat = new THREE.MeshPhongMaterial({color: 0x222222});
  const markers = D.frames.map(() => {
    const m = new THREE.Mesh(markerGeo, markerMat);
    scene.add(m);
    return m;
  });
  const trails = D.trails.map((f, k) => {
    const xyz = new Float32Array(3 * N);
    for (let i = 0; i < N; ++i) {
      framePosition(i, f, v).toArray(xyz, 3 * i);
    }
    const geo = new THREE.BufferGeometry();
    geo.setAttribute('position', new THREE.BufferAttribute(xyz, 3));
    const color = [0xd62728, 0x1f77b4, 0x2ca02c, 0x9467bd, 0x8c564b][k % 5];
    const whole = new THREE.Line(geo, new THREE.LineBasicMaterial(
        {color, transparent: true, opacity: 0.25}));
    const sofar = new THREE.Line(geo.clone(),
                                 new THREE.LineBasicMaterial({color}));
    scene.add(whole, sofar);
    return {whole, sofar};
  });

  // ------------------------------------------------------------ overlays
  // Per-sample points (contact points) and arrows (forces): each overlay's
  // data[i] is a flat list, x y z per point, or x y z fx fy fz per arrow.
  // scripts/view fills D.overlays from --overlay files; the page's
  // setOverlays() takes the same list.
  let overlays = [];
  let shown = false;  // set once the page has drawn its first sample
  const overlayGroup = new THREE.Group();
  scene.add(overlayGroup);
  function setOverlays(list) {
    overlayGroup.remove(...overlayGroup.children);
    overlays = (list || []).map((o, k) => {
      const color = [0xd62728, 0x17becf, 0xff7f0e, 0x2ca02c][k % 4];
      let fmax = 0;  // arrows: the longest is a quarter of the scene
      if (o.kind === 'arrows') {
        o.data.forEach((row) => {
          for (let j = 0; j + 5 < row.length; j += 6) {
            fmax = Math.max(fmax, Math.hypot(row[j + 3], row[j + 4],
                                             row[j + 5]));
          }
        });
      }
      const scale = o.scale || (fmax > 0 ? 0.25 * size / fmax : 1);
      return {o, color, scale, pool: []};
    });
    if (shown) setSample(current);
  }
  function drawOverlays(i) {
    overlays.forEach((ov) => {
      const row = ov.o.data[i] || [];
      const stride = ov.o.kind === 'arrows' ? 6 : 3;
      const count = Math.floor(row.length / stride);
      while (ov.pool.length < count) {  // grow the pool of objects
        const obj = ov.o.kind === 'arrows'
            ? new THREE.ArrowHelper(new THREE.Vector3(0, 0, 1),
                                    new THREE.Vector3(), 1, ov.color)
            : new THREE.Mesh(new THREE.SphereBufferGeometry(
                  1.8 * markerRadius, 12, 8),
                  new THREE.MeshPhongMaterial({color: ov.color}));
        overlayGroup.add(obj);
        ov.pool.push(obj);
      }
      ov.pool.forEach((obj, j) => {
        obj.visible = j < count;
        if (!obj.visible) return;
        obj.position.fromArray(row, stride * j);
        if (stride === 6) {
          const f = new THREE.Vector3().fromArray(row, 6 * j + 3);
          const len = f.length() * ov.scale;
          obj.visible = len > 0;
          if (len > 0) {
            obj.setDirection(f.normalize());
            obj.setLength(len, Math.min(0.3 * len, 0.04 * size),
                          Math.min(0.15 * len, 0.02 * size));
          }
        }
      });
    });
  }

  // -------------------------------------------------------------- camera
  const controls = new THREE.OrbitControls(camera, renderer.domElement);
  controls.addEventListener('change', render);
  function fitCamera() {
    const view3 = D.view || [35, 15];
    const az = Number(params.get('az') || view3[0]) * Math.PI / 180;
    const el = Number(params.get('el') || view3[1]) * Math.PI / 180;
    const aspect = camera.aspect;
    const dist = 0.5 * size / Math.sin(camera.fov * Math.PI / 360) /
                 Math.min(1, aspect);
    const dir = planar ? new THREE.Vector3(0, 0, 1)
        : new THREE.Vector3(Math.cos(el) * Math.cos(az),
                            Math.cos(el) * Math.sin(az), Math.sin(el));
    controls.target.copy(center);
    camera.position.copy(center).addScaledVector(dir, dist);
    camera.near = dist / 100;
    camera.far = dist * 100;
    camera.updateProjectionMatrix();
    controls.update();
  }
  function resize() {
    const w = view.clientWidth, h = view.clientHeight;
    renderer.setSize(w, h);
    camera.aspect = w / Math.max(h, 1);
    camera.updateProjectionMatrix();
    plots.forEach(drawPlotBase);
  }
  // Follow: the camera keeps its offset to the mechanism's centroid.
  function centroid(i) {
    const c = new THREE.Vector3();
    let n = 0;
    D.bodies.forEach((b) => {
      if (b.frame !== null && b.name !== 'ground') {
        c.add(framePosition(i, b.frame, v));
        ++n;
      }
    });
    return c.divideScalar(Math.max(1, n));
  }

  // ------------------------------------------------------------- samples
  let current = 0;
  function render() { renderer.render(scene, camera); }
  function setSample(i) {
    i = Math.max(0, Math.min(N - 1, Math.round(i)));
    if ($('follow').checked && i !== current) {
      const d = centroid(i).sub(centroid(current));
      camera.position.add(d);
      controls.target.add(d);
      controls.update();
    }
    current = i;
    const q = new THREE.Quaternion();
    D.bodies.forEach((b, k) => {
      if (b.frame === null) return;
      framePosition(i, b.frame, bodyGroups[k].position);
      bodyGroups[k].quaternion.copy(frameQuaternion(i, b.frame, q));
    });
    markers.forEach((m, f) => framePosition(i, f, m.position));
    trails.forEach((tr) => tr.sofar.geometry.setDrawRange(0, i + 1));
    drawOverlays(i);
    $('slider').value = i;
    $('time').textContent = 't = ' + D.t[i].toPrecision(6) + ' s  (' +
                            (i + 1) + '/' + N + ')';
    plots.forEach(drawPlotCursor);
    render();
    return i;
  }
  // The last sample at or before time t (the first one before the run).
  function sampleAt(t) {
    let lo = 0, hi = N - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (D.t[mid] <= t) lo = mid; else hi = mid - 1;
    }
    return lo;
  }
  function setTime(t) { return setSample(sampleAt(t)); }

  // ------------------------------------------------------------ playback
  const speeds = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5];
  const duration = D.t[N - 1] - D.t[0];
  // At first, the fastest speed that plays the run in 4 s or more.
  let speed = speeds.filter((s) => duration / s >= 4).pop() || speeds[0];
  speeds.forEach((s) => {
    const o = document.createElement('option');
    o.value = s;
    o.textContent = s + '\u00d7';
    o.selected = s === speed;
    $('speed').appendChild(o);
  });
  $('speed').onchange = (e) => { speed = Number(e.target.value); };
  let playing = false, clock = 0, last = 0;
  function play(on) {
    playing = on;
    $('play').innerHTML = on ? '&#10074;&#10074; pause' : '&#9654; play';
    if (on) {
      if (current === N - 1) setSample(0);
      clock = D.t[current];
      last = performance.now();
      requestAnimationFrame(tick);
    }
  }
  function tick(now) {
    if (!playing) return;
    clock += speed * (now - last) / 1000;
    last = now;
    if (clock >= D.t[N - 1]) {
      setSample(N - 1);
      play(false);
      return;
    }
    const i = sampleAt(clock);
    if (i !== current) setSample(i);
    requestAnimationFrame(tick);
  }
  $('play').onclick = () => play(!playing);
  $('slider').max = N - 1;
  $('slider').oninput = (e) => {
    play(false);
    setSample(Number(e.target.value));
  };
  document.addEventListener('keydown', (e) => {
    if (/INPUT|SELECT|BUTTON/.test(e.target.tagName)) return;
    if (e.key === ' ') { play(!playing); e.preventDefault(); }
    if (e.key === 'ArrowRight') { play(false); setSample(current + 1); }
    if (e.key === 'ArrowLeft') { play(false); setSample(current - 1); }
  });
  D.events.forEach((ev) => {  // a button per event: jump to it
    const b = document.createElement('button');
    b.textContent = ev.name + ' ' + Number(ev.t).toPrecision(4) + ' s';
    b.onclick = () => { play(false); setTime(ev.t); };
    $('events').appendChild(b);
  });
  // A check box that shows or hides a set of objects.
  const toggle = (id, on, objects) => {
    $(id).checked = on;
    const apply = () => {
      objects().forEach((o) => { o.visible = $(id).checked; });
      render();
    };
    $(id).onchange = apply;
    apply();
  };
  toggle('show-trails', true, () => trails.flatMap((t) => [t.whole, t.sofar]));
  toggle('show-frames', D.geometry_source !== 'geometry', () => markers);
  toggle('show-collision', visualCount === 0, () => collisionMeshes);
  $('follow').checked = params.get('follow') === '1';
  $('reset-view').onclick = () => { fitCamera(); render(); };

  // --------------------------------------------------------------- plots
  // One small plot per chosen CSV column against time, drawn once into
  // an off-screen canvas; the cursor at the current time is drawn on top.
  const plots = [];
  const margin = {l: 52, r: 8, t: 16, b: 14};
  function plotX(p, t) {
    return margin.l + (p.w - margin.l - margin.r) *
           (t - D.t[0]) / (duration || 1);
  }
  function plotY(p, y) {
    return margin.t + (p.h - margin.t - margin.b) *
           (p.hi - y) / (p.hi - p.lo);
  }
  function drawPlotBase(p) {
    const dpr = window.devicePixelRatio || 1;
    p.w = p.canvas.clientWidth;
    p.h = p.canvas.clientHeight;
    p.canvas.width = p.base.width = p.w * dpr;
    p.canvas.height = p.base.height = p.h * dpr;
    const g = p.base.getContext('2d');
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.fillStyle = '#fff';
    g.fillRect(0, 0, p.w, p.h);
    g.strokeStyle = '#bbb';
    g.strokeRect(margin.l, margin.t, p.w - margin.l - margin.r,
                 p.h - margin.t - margin.b);
    g.setLineDash([3, 3]);  // events
    D.events.forEach((ev) => {
      g.beginPath();
      g.moveTo(plotX(p, ev.t), margin.t);
      g.lineTo(plotX(p, ev.t), p.h - margin.b);
      g.stroke();
    });
    g.setLineDash([]);
    g.strokeStyle = '#1f5fa8';
    g.lineWidth = 1.5;
    g.beginPath();
    let pen = false;
    p.values.forEach((y, i) => {  // nulls (nan, inf) are gaps
      if (y === null) { pen = false; return; }
      const x = plotX(p, D.t[i]), yy = plotY(p, y);
      if (pen) g.lineTo(x, yy); else g.moveTo(x, yy);
      pen = true;
    });
    g.stroke();
    g.fillStyle = '#333';
    g.font = '11px sans-serif';
    g.fillText(p.column, margin.l, 11);
    // Enough digits that the two limits read differently.
    let digits = 4;
    const same = () => p.hi.toPrecision(digits) === p.lo.toPrecision(digits);
    while (digits < 12 && same()) ++digits;
    g.fillText(p.hi.toPrecision(digits), 2, margin.t + 8, margin.l - 4);
    g.fillText(p.lo.toPrecision(digits), 2, p.h - margin.b, margin.l - 4);
    g.fillText(D.t[0].toPrecision(3) + ' s', margin.l, p.h - 2);
    const end = D.t[N - 1].toPrecision(3) + ' s';
    g.fillText(end, p.w - margin.r - g.measureText(end).width, p.h - 2);
    drawPlotCursor(p);
  }
  function drawPlotCursor(p) {
    const g = p.canvas.getContext('2d');
    const dpr = window.devicePixelRatio || 1;
    g.setTransform(1, 0, 0, 1, 0, 0);
    g.drawImage(p.base, 0, 0);
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    const x = plotX(p, D.t[current]);
    g.strokeStyle = '#d62728';
    g.beginPath();
    g.moveTo(x, margin.t);
    g.lineTo(x, p.h - margin.b);
    g.stroke();
    const y = p.values[current];
    const text = y === null ? 'not finite' : y.toPrecision(6);
    g.fillStyle = '#d62728';
    if (y !== null) g.fillRect(x - 2, plotY(p, y) - 2, 4, 4);
    g.fillText(text, p.w - margin.r - g.measureText(text).width - 22, 11);
  }
  function addPlot(column) {
    const k = D.columns.indexOf(column);
    if (k < 0 || plots.some((p) => p.column === column)) return;
    const values = D.values[k];
    let lo = Infinity, hi = -Infinity;  // (a loop: long runs overflow
    values.forEach((y) => {             // the stack of Math.min(...values))
      if (y !== null) { lo = Math.min(lo, y); hi = Math.max(hi, y); }
    });
    if (lo > hi) { lo = -1; hi = 1; }  // nothing finite
    if (hi - lo <= 1e-12 * Math.max(Math.abs(lo), Math.abs(hi), 1e-300)) {
      const pad = Math.abs(hi) * 0.01 || 1;  // a constant column
      lo -= pad; hi += pad;
    }
    const div = document.createElement('div');
    div.className = 'plot';
    const canvas = document.createElement('canvas');
    const remove = document.createElement('button');
    remove.textContent = '\u00d7';
    remove.title = 'remove this plot';
    div.append(canvas, remove);
    $('plots').appendChild(div);
    const p = {column, values, lo, hi, canvas,
               base: document.createElement('canvas')};
    plots.push(p);
    remove.onclick = () => { plots.splice(plots.indexOf(p), 1); div.remove(); };
    const scrub = (e) => {  // click or drag on a plot: go to that time
      if (e.type === 'mousemove' && !(e.buttons & 1)) return;
      const r = canvas.getBoundingClientRect();
      play(false);
      setTime(D.t[0] + (e.clientX - r.left - margin.l) /
              (p.w - margin.l - margin.r) * duration);
    };
    canvas.onmousedown = scrub;
    canvas.onmousemove = scrub;
    drawPlotBase(p);
  }
  const pick = $('add-column');
  pick.appendChild(new Option('\u2014 column \u2014', ''));
  D.columns.forEach((c) => pick.appendChild(new Option(c, c)));
  pick.onchange = () => { addPlot(pick.value); pick.value = ''; };

  // ---------------------------------------------------------------- start
  const notes = [N + ' samples', D.frames.length + ' frames',
                 D.geometry_source === 'geometry' ? 'geometry from the model'
                     : 'capsules between frames (no geometry in the model)'];
  if (skipped) {
    notes.push(skipped + (skipped === 1 ? ' mesh geom' : ' mesh geoms') +
               ' not drawn');
  }
  if (D.status && D.status !== 'ok') notes.push('run ' + D.status);
  $('info').textContent = notes.join(', ');
  window.addEventListener('resize', () => { resize(); render(); });
  resize();
  fitCamera();
  D.plot.forEach(addPlot);
  setOverlays(D.overlays);
  const t0 = params.get('t');
  setSample(t0 === null ? 0 : sampleAt(Number(t0)));
  shown = true;

  // The page's interface for scripts and the browser test.
  window.daedalusViewer = {
    count: N, setSample, setTime, setOverlays, addPlot, play,
    setUpMs: performance.now() - started,  // ms from the script's start
    sample: () => current,
    time: () => D.t[current],
    // Where the moving things are at the current sample: the box
    // [x0, y0, x1, y1] (CSS pixels of the page) around the projected
    // corners of the world-aligned box of the bodies (but the ground),
    // their frames' markers and the visible overlays.
    screenBox() {
      scene.updateMatrixWorld();
      const world = new THREE.Box3();
      D.bodies.forEach((body, k) => {
        if (body.name !== 'ground') world.expandByObject(bodyGroups[k]);
      });
      markers.forEach((m, f) => {
        if (D.bodies[D.frame_body[f]].name !== 'ground') {
          world.expandByObject(m);
        }
      });
      overlayGroup.children.forEach((o) => {
        if (o.visible) world.expandByObject(o);
      });
      const r = renderer.domElement.getBoundingClientRect();
      const b = [Infinity, Infinity, -Infinity, -Infinity];
      for (let c = 0; c < 8; ++c) {
        v.set(c & 1 ? world.max.x : world.min.x,
              c & 2 ? world.max.y : world.min.y,
              c & 4 ? world.max.z : world.min.z).project(camera);
        const x = r.left + (v.x + 1) / 2 * r.width;
        const y = r.top + (1 - v.y) / 2 * r.height;
        b[0] = Math.min(b[0], x); b[1] = Math.min(b[1], y);
        b[2] = Math.max(b[2], x); b[3] = Math.max(b[3], y);
      }
      return b;
    },
    canvasRect() {
      const r = renderer.domElement.getBoundingClientRect();
      return [r.left, r.top, r.right, r.bottom];
    },
  };
  document.body.dataset.status = 'ready';
  if (t0 === null && params.get('play') !== '0') play(true);
})();

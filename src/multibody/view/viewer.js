// showmotion in the browser: plays a multibody animation stored in this page.
// Written for multibody (no third-party code). The page carries the model's tree, its drawing
// instructions and q(t); forward kinematics runs here, so the file holds one number per joint
// variable per sample instead of a pose per body per frame. WebGL 1, no extensions.
(function () {
  "use strict";
  const DATA = JSON.parse(document.getElementById("sm-data").textContent);
  const M = DATA.model;

  // ---------- decoding -------------------------------------------------------------------------
  function bytes(b64) {
    const bin = atob(b64), u8 = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) u8[i] = bin.charCodeAt(i);
    return u8.buffer;
  }
  const f32 = (s) => new Float32Array(bytes(s));
  const f64 = (s) => new Float64Array(bytes(s));
  const u32 = (s) => new Uint32Array(bytes(s));

  const T = f64(DATA.motion.t), Q = f32(DATA.motion.q), NQ = M.nq, NS = T.length;
  const T0 = T[0], T1 = T[NS - 1], DUR = Math.max(T1 - T0, 1e-9);

  // ---------- small linear algebra (3×3 row-major, 4×4 column-major for GL) ----------------------
  function mul3(A, B) {
    const C = new Array(9);
    for (let r = 0; r < 3; r++) for (let c = 0; c < 3; c++)
      C[3 * r + c] = A[3 * r] * B[c] + A[3 * r + 1] * B[3 + c] + A[3 * r + 2] * B[6 + c];
    return C;
  }
  const mv3 = (A, v) => [A[0] * v[0] + A[1] * v[1] + A[2] * v[2], A[3] * v[0] + A[4] * v[1] + A[5] * v[2],
                         A[6] * v[0] + A[7] * v[1] + A[8] * v[2]];
  const add = (a, b) => [a[0] + b[0], a[1] + b[1], a[2] + b[2]];
  const sub = (a, b) => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
  const scl = (a, s) => [a[0] * s, a[1] * s, a[2] * s];
  const dot = (a, b) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
  const cross = (a, b) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
  const norm = (a) => { const n = Math.hypot(a[0], a[1], a[2]) || 1; return [a[0] / n, a[1] / n, a[2] / n]; };
  function mat4(R, p) {  // pose → column-major 4×4
    return new Float32Array([R[0], R[3], R[6], 0, R[1], R[4], R[7], 0, R[2], R[5], R[8], 0, p[0], p[1], p[2], 1]);
  }
  function mul4(A, B) {
    const C = new Float32Array(16);
    for (let c = 0; c < 4; c++) for (let r = 0; r < 4; r++) {
      let s = 0;
      for (let k = 0; k < 4; k++) s += A[4 * k + r] * B[4 * c + k];
      C[4 * c + r] = s;
    }
    return C;
  }
  function perspective(fovy, aspect, near, far) {
    const f = 1 / Math.tan(fovy / 2), nf = 1 / (near - far);
    return new Float32Array([f / aspect, 0, 0, 0, 0, f, 0, 0, 0, 0, (far + near) * nf, -1, 0, 0, 2 * far * near * nf, 0]);
  }
  function lookAt(eye, target, up) {
    const z = norm(sub(eye, target)), x = norm(cross(up, z)), y = cross(z, x);
    return new Float32Array([x[0], y[0], z[0], 0, x[1], y[1], z[1], 0, x[2], y[2], z[2], 0,
                             -dot(x, eye), -dot(y, eye), -dot(z, eye), 1]);
  }

  // ---------- forward kinematics (the same jcalc as multibody's kernels) --------------------------
  /*{{JOINT_POSE}}*/  // generated: per joint type code, its pose steps (multibody.model.joints.JOINTS)
  function turn(a, th) {  // Rodrigues: rotation by th about the unit axis a, row-major
    const c = Math.cos(th), s = Math.sin(th), t = 1 - c;
    return [c + a[0] * a[0] * t, a[0] * a[1] * t - a[2] * s, a[0] * a[2] * t + a[1] * s,
            a[1] * a[0] * t + a[2] * s, c + a[1] * a[1] * t, a[1] * a[2] * t - a[0] * s,
            a[2] * a[0] * t - a[1] * s, a[2] * a[1] * t + a[0] * s, c + a[2] * a[2] * t];
  }
  function quatRot(w, x, y, z) {  // rotation of the quaternion [w, x, y, z], normalised
    const n = Math.hypot(w, x, y, z) || 1; w /= n; x /= n; y /= n; z /= n;
    return [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
            2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
            2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)];
  }
  function jointPose(i, q) {  // pose of body i in its joint frame: [R_JB (row-major), p_JB], step by step
    const a = M.axis[i], qs = M.q_start[i];
    let R = [1, 0, 0, 0, 1, 0, 0, 0, 1], p = [0, 0, 0];
    for (const [op, k] of JOINT_POSE[M.jtype[i]]) {
      const x = q[qs + k];
      let Rs = null, ps = null;
      if (op === "rot") Rs = turn(a, x);
      else if (op === "rotz") Rs = turn([0, 0, 1], x);
      else if (op === "quat") Rs = quatRot(x, q[qs + k + 1], q[qs + k + 2], q[qs + k + 3]);
      else if (op === "slide") ps = scl(a, x);
      else if (op === "screw") ps = scl(a, M.pitch[i] * x);
      else if (op === "xyz") ps = [x, q[qs + k + 1], q[qs + k + 2]];
      else if (op === "xy") ps = [x, q[qs + k + 1], 0];
      if (ps) p = add(p, mv3(R, ps));
      if (Rs) R = mul3(R, Rs);
    }
    return [R, p];
  }
  function bodyPoses(q) {  // world poses {R: A_IB row-major, p: I_r_OB} of every body
    const out = [];
    for (let i = 0; i < M.nb; i++) {
      const [RJ, pJ] = jointPose(i, q), RT = M.tree_R[i];
      const R = mul3(RT, RJ), p = add(M.tree_t[i], mv3(RT, pJ));
      const par = M.parent[i];
      out.push(par < 0 ? { R, p } : { R: mul3(out[par].R, R), p: add(out[par].p, mv3(out[par].R, p)) });
    }
    return out;
  }
  function qAt(t) {  // linear interpolation between samples, as showmotion does
    let lo = 0, hi = NS - 1;
    if (t <= T[0]) hi = 0; else if (t >= T[NS - 1]) lo = hi; else {
      while (hi - lo > 1) { const mid = (lo + hi) >> 1; if (T[mid] <= t) lo = mid; else hi = mid; }
    }
    const q = new Float64Array(NQ);
    const a = hi > lo ? (t - T[lo]) / (T[hi] - T[lo]) : 0;
    for (let k = 0; k < NQ; k++) q[k] = (1 - a) * Q[lo * NQ + k] + a * Q[hi * NQ + k];
    return q;
  }

  // ---------- WebGL ------------------------------------------------------------------------------
  const canvas = document.getElementById("sm-canvas");
  const gl = canvas.getContext("webgl", { preserveDrawingBuffer: true, antialias: true });
  if (!gl) { document.getElementById("sm-error").textContent = "This browser has no WebGL."; return; }

  function program(vs, fs) {
    const p = gl.createProgram();
    for (const [type, src] of [[gl.VERTEX_SHADER, vs], [gl.FRAGMENT_SHADER, fs]]) {
      const s = gl.createShader(type);
      gl.shaderSource(s, src); gl.compileShader(s);
      if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error(gl.getShaderInfoLog(s));
      gl.attachShader(p, s);
    }
    gl.linkProgram(p);
    if (!gl.getProgramParameter(p, gl.LINK_STATUS)) throw new Error(gl.getProgramInfoLog(p));
    return p;
  }
  // lit surfaces: two directional lights fixed to the camera, ambient, a little specular
  const surf = program(
    "attribute vec3 aPos; attribute vec3 aNrm; uniform mat4 uModel, uVP; varying vec3 vN, vW;" +
    "void main(){ vec4 w = uModel * vec4(aPos, 1.0); vW = w.xyz; vN = (uModel * vec4(aNrm, 0.0)).xyz;" +
    " gl_Position = uVP * w; }",
    "precision mediump float; varying vec3 vN, vW; uniform vec4 uColor; uniform vec3 uEye, uL1, uL2;" +
    "void main(){ vec3 n = normalize(vN); vec3 v = normalize(uEye - vW); if (dot(n, v) < 0.0) n = -n;" +
    " float d = 0.28 + 0.62 * max(dot(n, uL1), 0.0) + 0.25 * max(dot(n, uL2), 0.0);" +
    " float s = 0.22 * pow(max(dot(n, normalize(uL1 + v)), 0.0), 40.0);" +
    " gl_FragColor = vec4(uColor.rgb * d + vec3(s), uColor.a); }");
  const flat = program(
    "attribute vec3 aPos; attribute vec3 aCol; uniform mat4 uModel, uVP; varying vec3 vC;" +
    "void main(){ vC = aCol; gl_Position = uVP * uModel * vec4(aPos, 1.0); }",
    "precision mediump float; varying vec3 vC; void main(){ gl_FragColor = vec4(vC, 1.0); }");

  function buffer(data) {
    const b = gl.createBuffer();
    gl.bindBuffer(gl.ARRAY_BUFFER, b);
    gl.bufferData(gl.ARRAY_BUFFER, data instanceof Float32Array ? data : new Float32Array(data), gl.STATIC_DRAW);
    return b;
  }
  // a triangle soup with face normals from indexed triangles
  function soup(P, I) {
    const pos = new Float32Array(I.length * 3), nrm = new Float32Array(I.length * 3);
    for (let f = 0; f < I.length; f += 3) {
      const a = [P[3 * I[f]], P[3 * I[f] + 1], P[3 * I[f] + 2]], b = [P[3 * I[f + 1]], P[3 * I[f + 1] + 1], P[3 * I[f + 1] + 2]],
            c = [P[3 * I[f + 2]], P[3 * I[f + 2] + 1], P[3 * I[f + 2] + 2]];
      const n = norm(cross(sub(b, a), sub(c, a)));
      for (let k = 0; k < 3; k++) {
        const v = [a, b, c][k];
        pos.set(v, 3 * (f + k)); nrm.set(n, 3 * (f + k));
      }
    }
    return { pos, nrm };
  }
  // smooth surfaces: positions and normals given per vertex, drawn as indexed triangles expanded
  function expand(P, N, I) {
    const pos = new Float32Array(I.length * 3), nrm = new Float32Array(I.length * 3);
    for (let k = 0; k < I.length; k++) { pos.set(P.slice(3 * I[k], 3 * I[k] + 3), 3 * k); nrm.set(N.slice(3 * I[k], 3 * I[k] + 3), 3 * k); }
    return { pos, nrm };
  }
  function sphereGeom(r, zShift, hemi) {  // hemi: 0 whole, +1 upper, -1 lower
    const P = [], N = [], I = [], nl = 12, nm = 24;
    const th0 = hemi > 0 ? 0 : (hemi < 0 ? Math.PI / 2 : 0), th1 = hemi > 0 ? Math.PI / 2 : Math.PI;
    for (let a = 0; a <= nl; a++) {
      const th = th0 + (th1 - th0) * a / nl;
      for (let b = 0; b <= nm; b++) {
        const ph = 2 * Math.PI * b / nm, n = [Math.sin(th) * Math.cos(ph), Math.sin(th) * Math.sin(ph), Math.cos(th)];
        N.push(...n); P.push(r * n[0], r * n[1], r * n[2] + zShift);
      }
    }
    for (let a = 0; a < nl; a++) for (let b = 0; b < nm; b++) {
      const i0 = a * (nm + 1) + b, i1 = i0 + 1, j0 = i0 + nm + 1, j1 = j0 + 1;
      I.push(i0, j0, j1, i0, j1, i1);
    }
    return expand(P, N, I);
  }
  function cylinderGeom(r, len, caps) {
    const P = [], N = [], I = [], n = 32, h = len / 2;
    for (let k = 0; k <= n; k++) {
      const a = 2 * Math.PI * k / n, c = Math.cos(a), s = Math.sin(a);
      P.push(r * c, r * s, -h, r * c, r * s, h); N.push(c, s, 0, c, s, 0);
    }
    for (let k = 0; k < n; k++) I.push(2 * k, 2 * k + 2, 2 * k + 3, 2 * k, 2 * k + 3, 2 * k + 1);
    const side = expand(P, N, I), parts = [side];
    if (caps === "flat") {
      const C = [], CN = [];
      for (let k = 0; k < n; k++) {
        const a0 = 2 * Math.PI * k / n, a1 = 2 * Math.PI * (k + 1) / n;
        C.push(0, 0, h, r * Math.cos(a0), r * Math.sin(a0), h, r * Math.cos(a1), r * Math.sin(a1), h);
        C.push(0, 0, -h, r * Math.cos(a1), r * Math.sin(a1), -h, r * Math.cos(a0), r * Math.sin(a0), -h);
        CN.push(0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, -1, 0, 0, -1, 0, 0, -1);
      }
      parts.push({ pos: new Float32Array(C), nrm: new Float32Array(CN) });
    } else if (caps === "round") {
      parts.push(sphereGeom(r, h, 1), sphereGeom(r, -h, -1));
    }
    return concat(parts);
  }
  function concat(parts) {
    const n = parts.reduce((s, p) => s + p.pos.length, 0), pos = new Float32Array(n), nrm = new Float32Array(n);
    let o = 0;
    for (const p of parts) { pos.set(p.pos, o); nrm.set(p.nrm, o); o += p.pos.length; }
    return { pos, nrm };
  }
  function boxGeom(s) {
    const P = [], I = [];
    for (const x of [-1, 1]) for (const y of [-1, 1]) for (const z of [-1, 1]) P.push(x * s[0] / 2, y * s[1] / 2, z * s[2] / 2);
    I.push(0, 1, 3, 0, 3, 2, 4, 6, 7, 4, 7, 5, 0, 4, 5, 0, 5, 1, 2, 3, 7, 2, 7, 6, 0, 2, 6, 0, 6, 4, 1, 5, 7, 1, 7, 3);
    return soup(P, I);
  }
  function polygonsGeom(V, faces) {
    const P = V.flat(), I = [];
    for (const f of faces) for (let k = 1; k + 1 < f.length; k++) I.push(f[0], f[k], f[k + 1]);
    return soup(P, I);
  }
  function tilesGeom(hx, hy, edge, parity) {
    const P = [], I = [], nx = Math.max(1, Math.round(2 * hx / edge)), ny = Math.max(1, Math.round(2 * hy / edge));
    for (let a = 0; a < nx; a++) for (let b = 0; b < ny; b++) {
      if ((a + b) % 2 !== parity) continue;
      const x0 = -hx + 2 * hx * a / nx, x1 = -hx + 2 * hx * (a + 1) / nx, y0 = -hy + 2 * hy * b / ny, y1 = -hy + 2 * hy * (b + 1) / ny;
      const o = P.length / 3;
      P.push(x0, y0, 0, x1, y0, 0, x1, y1, 0, x0, y1, 0); I.push(o, o + 1, o + 2, o, o + 2, o + 3);
    }
    return soup(P, I);
  }

  // ---------- the scene: one drawable per drawing instruction ------------------------------------
  function meshPositions(m) {  // 16-bit positions across the mesh's bounding box
    const u = new Uint16Array(bytes(m.positions)), P = new Float32Array(u.length);
    for (let k = 0; k < u.length; k++) P[k] = m.lo[k % 3] + u[k] / 65535 * m.span[k % 3];
    return P;
  }
  const meshes = DATA.meshes.map((m) => soup(meshPositions(m),
    m.index_bytes === 4 ? u32(m.indices) : new Uint16Array(bytes(m.indices))));
  const drawables = [];   // {body, local (4×4), vbo, nbo, count, color, lines}
  function addSurface(body, local, g, color) {
    if (!g.pos.length) return;
    drawables.push({ body, local, vbo: buffer(g.pos), nbo: buffer(g.nrm), count: g.pos.length / 3, color });
  }
  function addLines(body, local, pts, cols, mode) {
    drawables.push({ body, local, vbo: buffer(pts), cbo: buffer(cols), count: pts.length / 3, lines: mode || gl.LINES });
  }
  const GREY = [0.72, 0.72, 0.76, 1];
  for (const s of DATA.shapes) {
    const local = mat4(s.R, s.t), color = s.rgba || GREY;
    if (s.kind === "box") addSurface(s.body, local, boxGeom(s.size), color);
    else if (s.kind === "cylinder") addSurface(s.body, local, cylinderGeom(s.size[0], s.size[1], "flat"), color);
    else if (s.kind === "capsule") addSurface(s.body, local, cylinderGeom(s.size[0], s.size[1], "round"), color);
    else if (s.kind === "sphere") addSurface(s.body, local, sphereGeom(s.size[0], 0, 0), color);
    else if (s.kind === "mesh") addSurface(s.body, local, meshes[s.mesh], color);
    else if (s.kind === "solid") addSurface(s.body, local, polygonsGeom(s.vertices, s.faces), color);
    else if (s.kind === "tiles") {
      const c2 = [color[0] * 0.75, color[1] * 0.75, color[2] * 0.75, color[3]];
      addSurface(s.body, local, tilesGeom(s.size[0], s.size[1], s.size[2], 0), color);
      addSurface(s.body, local, tilesGeom(s.size[0], s.size[1], s.size[2], 1), c2);
    } else if (s.kind === "line") {
      const pts = [], cols = [], c = (s.rgba || [0.1, 0.1, 0.1, 1]).slice(0, 3);
      for (let k = 0; k + 1 < s.vertices.length; k++) { pts.push(...s.vertices[k], ...s.vertices[k + 1]); cols.push(...c, ...c); }
      addLines(s.body, local, pts, cols);
    }
  }
  const SC = DATA.scene, UP = norm(SC.up), ID4 = mat4([1, 0, 0, 0, 1, 0, 0, 0, 1], [0, 0, 0]);
  // floor grid perpendicular to "up" through the lowest point of the motion (unless the model has tiles)
  if (SC.grid) {
    const e1 = norm(Math.abs(UP[0]) < 0.9 ? cross(UP, [1, 0, 0]) : cross(UP, [0, 1, 0])), e2 = cross(UP, e1);
    const o = add(SC.center, scl(UP, SC.floor - dot(SC.center, UP))), half = SC.grid.half, step = SC.grid.step;
    const pts = [], cols = [];
    for (let k = -Math.round(half / step); k <= Math.round(half / step); k++) {
      const c = k === 0 ? [0.55, 0.55, 0.6] : [0.78, 0.78, 0.82];
      pts.push(...add(o, add(scl(e1, k * step), scl(e2, -half))), ...add(o, add(scl(e1, k * step), scl(e2, half))));
      pts.push(...add(o, add(scl(e2, k * step), scl(e1, -half))), ...add(o, add(scl(e2, k * step), scl(e1, half))));
      cols.push(...c, ...c, ...c, ...c);
    }
    addLines(-1, ID4, pts, cols);
  }
  // body frames (x, y, z in red, green, blue) and the world frame
  const frameDrawables = [];
  for (let b = -1; b < M.nb; b++) {
    const L = SC.frame * (b < 0 ? 1.6 : 1), pts = [0, 0, 0, L, 0, 0, 0, 0, 0, 0, L, 0, 0, 0, 0, 0, 0, L];
    addLines(b, ID4, pts, [1, 0, 0, 1, 0, 0, 0, 0.7, 0, 0, 0.7, 0, 0, 0, 1, 0, 0, 1]);
    frameDrawables.push(drawables[drawables.length - 1]);
  }

  // ---------- contact forces: one arrow per contact of the sample at or before t (Python's
  // contact_arrows), from the contact point along the force on geom b, SCALE m per N ------------------
  const CT = DATA.contacts || null;
  const contactBuf = CT ? { start: new Int32Array(bytes(CT.start)), pos: new Float32Array(bytes(CT.pos)),
                            force: new Float32Array(bytes(CT.force)), friction: new Float32Array(bytes(CT.friction)),
                            vbo: gl.createBuffer(), cbo: gl.createBuffer() } : null;
  function sampleAt(t) {  // the last sample at or before t
    let lo = 0, hi = NS - 1;
    while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (T[mid] <= t + 1e-12) lo = mid; else hi = mid - 1; }
    return lo;
  }
  function contactArrows(t) {  // [[start (3), end (3), friction share], ...] in world coordinates
    if (!contactBuf) return [];
    const i = sampleAt(t), out = [];
    for (let k = contactBuf.start[i]; k < contactBuf.start[i + 1]; k++) {
      const p = [contactBuf.pos[3 * k], contactBuf.pos[3 * k + 1], contactBuf.pos[3 * k + 2]];
      const f = [contactBuf.force[3 * k], contactBuf.force[3 * k + 1], contactBuf.force[3 * k + 2]];
      out.push([p, add(p, scl(f, CT.scale)), contactBuf.friction[k]]);
    }
    return out;
  }
  function contactLines(t) {  // shaft and a two-stroke head per arrow, as gl.LINES: red along the normal, blue friction
    const pts = [], cols = [];
    for (const [a, b, fr] of contactArrows(t)) {
      const C = [0.85 * (1 - fr) + 0.1 * fr, 0.1, 0.1 * (1 - fr) + 0.85 * fr];
      const d = sub(b, a), L = Math.hypot(d[0], d[1], d[2]);
      if (!(L > 0)) continue;
      const u = scl(d, 1 / L), s = norm(Math.abs(u[2]) < 0.9 ? cross(u, [0, 0, 1]) : cross(u, [1, 0, 0])), h = 0.25 * L;
      const back = add(b, scl(u, -h));
      pts.push(...a, ...b, ...b, ...add(back, scl(s, 0.4 * h)), ...b, ...add(back, scl(s, -0.4 * h)));
      for (let k = 0; k < 6; k++) cols.push(...C);
    }
    return { pts, cols };
  }

  // ---------- camera: orbit / zoom / pan, fixed or tracking a body -------------------------------
  const cam = DATA.camera || {};
  const camUp = norm(cam.up || SC.up);
  const ref1 = norm(Math.abs(camUp[0]) < 0.9 ? cross(camUp, [1, 0, 0]) : cross(camUp, [0, 1, 0])), ref2 = cross(camUp, ref1);
  const view = {};
  function resetView() {
    const d = norm(cam.direction || [1, -1.6, 0.9]);
    view.yaw = Math.atan2(dot(d, ref2), dot(d, ref1));
    view.pitch = Math.asin(Math.max(-1, Math.min(1, dot(d, camUp))));
    view.dist = 3.0 * SC.radius / (cam.zoom || 1);
    view.target = (cam.locus || SC.center).slice();
    view.pan = [0, 0, 0];
  }
  resetView();
  function eyeDir() {
    const c = Math.cos(view.pitch);
    return add(add(scl(ref1, c * Math.cos(view.yaw)), scl(ref2, c * Math.sin(view.yaw))), scl(camUp, Math.sin(view.pitch)));
  }
  let drag = null;
  canvas.addEventListener("contextmenu", (e) => e.preventDefault());
  canvas.addEventListener("mousedown", (e) => { drag = { x: e.clientX, y: e.clientY, pan: e.button === 2 || e.shiftKey }; });
  window.addEventListener("mouseup", () => { drag = null; });
  window.addEventListener("mousemove", (e) => {
    if (!drag) return;
    const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
    drag.x = e.clientX; drag.y = e.clientY;
    if (drag.pan) {
      const d = eyeDir(), right = norm(cross(camUp, d)), up = cross(d, right), k = view.dist * 0.0016;
      view.pan = add(view.pan, add(scl(right, -dx * k), scl(up, dy * k)));
    } else {
      view.yaw -= dx * 0.008;
      view.pitch = Math.max(-1.55, Math.min(1.55, view.pitch + dy * 0.008));
    }
    dirty = true;
  });
  canvas.addEventListener("wheel", (e) => { e.preventDefault(); view.dist *= Math.exp(e.deltaY * 0.0012); dirty = true; }, { passive: false });
  canvas.addEventListener("dblclick", () => { resetView(); dirty = true; });

  // ---------- controls ---------------------------------------------------------------------------
  const $ = (id) => document.getElementById(id);
  const ui = { play: $("sm-play"), speed: $("sm-speed"), speedOut: $("sm-speed-out"), coarse: $("sm-coarse"), fine: $("sm-fine"),
               loop: $("sm-loop"), follow: $("sm-follow"), frames: $("sm-frames"), time: $("sm-time"), reset: $("sm-reset"),
               contacts: $("sm-contacts") };
  if (contactBuf) $("sm-contacts-label").hidden = false;    // the toggle shows only when there are arrows
  const state = { t: T0, playing: false, speed: 1, fineAnchor: T0 };
  let dirty = true;
  for (let b = 0; b < M.nb; b++) { const o = document.createElement("option"); o.value = b; o.textContent = M.body_names[b]; ui.follow.appendChild(o); }
  if (cam.body !== null && cam.body !== undefined) ui.follow.value = String(cam.body);
  for (const o of ui.follow.options) o.title = o.textContent;
  ui.follow.title = ui.follow.options[ui.follow.selectedIndex].textContent;
  const FINE_SPAN = Math.max(DUR / 50, 1e-6);
  function setTime(t, fromFine) {
    state.t = Math.min(T1, Math.max(T0, t));
    ui.coarse.value = String(Math.round(10000 * (state.t - T0) / DUR));
    if (!fromFine) { state.fineAnchor = state.t; ui.fine.value = "0"; }
    dirty = true;
  }
  function setPlaying(p) { state.playing = p; ui.play.textContent = p ? "❚❚ pause" : "▶ play"; last = null; }
  function setSpeed(s) { state.speed = s; ui.speed.value = String(s); ui.speedOut.textContent = (s >= 0 ? "+" : "") + s.toFixed(2) + "×"; }
  ui.play.addEventListener("click", () => {
    if (!state.playing && !ui.loop.checked && ((state.speed > 0 && state.t >= T1) || (state.speed < 0 && state.t <= T0)))
      setTime(state.speed > 0 ? T0 : T1);
    setPlaying(!state.playing);
  });
  ui.speed.addEventListener("input", () => setSpeed(parseFloat(ui.speed.value)));
  ui.coarse.addEventListener("input", () => setTime(T0 + DUR * parseFloat(ui.coarse.value) / 10000));
  ui.fine.addEventListener("input", () => setTime(state.fineAnchor + FINE_SPAN * parseFloat(ui.fine.value) / 1000, true));
  ui.fine.addEventListener("change", () => { state.fineAnchor = state.t; ui.fine.value = "0"; });
  const followTitle = () => { const o = ui.follow.options[ui.follow.selectedIndex]; ui.follow.title = o ? o.textContent : ""; };
  ui.follow.addEventListener("change", () => { view.pan = [0, 0, 0]; followTitle(); dirty = true; });
  ui.frames.addEventListener("change", () => { dirty = true; });
  ui.contacts.addEventListener("change", () => { dirty = true; });
  ui.reset.addEventListener("click", () => { resetView(); dirty = true; });
  window.addEventListener("keydown", (e) => {
    if (e.target.tagName === "INPUT" && e.target.type !== "range" && e.target.type !== "checkbox") return;
    if (e.key === " ") { e.preventDefault(); ui.play.click(); }
    else if (e.key === "ArrowRight") setTime(state.t + DUR / 200);
    else if (e.key === "ArrowLeft") setTime(state.t - DUR / 200);
  });
  setSpeed(1);

  // ---------- plots on the same time cursor -----------------------------------------------------
  const PL = DATA.plots, PT = PL.t ? f32(PL.t) : null;
  const plotCanvases = [];
  const PALETTE = ["#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"];
  // past ten series the colours repeat with another dash, so 32 Talos joints stay told apart
  const DASHES = [[], [6, 3], [2, 2], [8, 3, 2, 3]], KEY_STYLES = ["solid", "dashed", "dotted", "dashed"];
  const FONT = "10px sans-serif";
  for (const group of PL.groups || []) {
    const wrap = document.createElement("div"); wrap.className = "sm-plot";
    const title = document.createElement("div"); title.className = "sm-plot-title"; title.textContent = group.title;
    title.title = group.title;
    const c = document.createElement("canvas"); c.width = 420; c.height = 150; c.id = "sm-plot-" + group.id;
    const series = group.series.map((s, k) => ({ name: s.name, y: f32(s.data), color: s.color || PALETTE[k % PALETTE.length],
                                                 dash: DASHES[Math.floor(k / PALETTE.length) % DASHES.length] }));
    // the legend is HTML under the plot: names wrap onto lines and end in an ellipsis, never overlap
    const legend = document.createElement("div"); legend.className = "sm-legend"; legend.id = "sm-legend-" + group.id;
    const P = { c, series, lo: 0, hi: 0, highlight: -1, layout: null };
    series.forEach((s, k) => {
      const key = document.createElement("span"); key.className = "sm-key"; key.title = s.name;
      const line = document.createElement("i");
      line.style.borderTopColor = s.color;
      line.style.borderTopStyle = KEY_STYLES[Math.floor(k / PALETTE.length) % KEY_STYLES.length];
      const name = document.createElement("span"); name.textContent = s.name; name.style.color = s.color;
      key.appendChild(line); key.appendChild(name); legend.appendChild(key);
      key.addEventListener("mouseenter", () => { P.highlight = k; dirty = true; });
      key.addEventListener("mouseleave", () => { P.highlight = -1; dirty = true; });
    });
    wrap.appendChild(title); wrap.appendChild(c); wrap.appendChild(legend); $("sm-plots").appendChild(wrap);
    let lo = Infinity, hi = -Infinity;
    for (const s of series) for (const v of s.y) { if (v < lo) lo = v; if (v > hi) hi = v; }
    if (!(hi > lo)) { hi = lo + 1; lo -= 1; }
    const pad = 0.06 * (hi - lo); P.lo = lo - pad; P.hi = hi + pad;
    plotCanvases.push(P);
    c.addEventListener("click", (e) => {
      const r = c.getBoundingClientRect(), x = (e.clientX - r.left) / r.width * c.width, L = plotLayout(P);
      setTime(T0 + DUR * (x - L.frame.x0) / (L.frame.x1 - L.frame.x0));
    });
  }
  function plotLayout(P) {
    // the labels are measured: the frame starts right of the widest value label and ends above the
    // time labels, so no label runs into the frame or off the canvas
    const g = P.c.getContext("2d"), W = P.c.width, H = P.c.height;
    g.font = FONT;
    const text = { hi: P.hi.toPrecision(3), lo: P.lo.toPrecision(3), t0: T0.toFixed(2) + " s", t1: T1.toFixed(2) + " s" };
    const wid = (s) => g.measureText(s).width, TH = 10;
    const x0 = Math.ceil(Math.max(wid(text.hi), wid(text.lo))) + 8, x1 = W - 8, y0 = 6, y1 = H - TH - 8;
    const labels = {
      hi: { text: text.hi, x: x0 - 4 - wid(text.hi), y: y0, w: wid(text.hi), h: TH },
      lo: { text: text.lo, x: x0 - 4 - wid(text.lo), y: y1 - TH, w: wid(text.lo), h: TH },
      t0: { text: text.t0, x: x0, y: y1 + 4, w: wid(text.t0), h: TH },
      t1: { text: text.t1, x: x1 - wid(text.t1), y: y1 + 4, w: wid(text.t1), h: TH },
    };
    return { width: W, height: H, frame: { x0, x1, y0, y1 }, labels };
  }
  function drawPlots() {
    for (const P of plotCanvases) {
      const L = plotLayout(P), g = P.c.getContext("2d"), W = L.width, H = L.height;
      const { x0, x1, y0, y1 } = L.frame;
      P.layout = L;
      g.clearRect(0, 0, W, H); g.fillStyle = "#fff"; g.fillRect(0, 0, W, H);
      g.setLineDash([]); g.strokeStyle = "#ccc"; g.lineWidth = 1; g.strokeRect(x0, y0, x1 - x0, y1 - y0);
      g.fillStyle = "#444"; g.font = FONT; g.textBaseline = "top"; g.textAlign = "left";
      for (const k in L.labels) { const l = L.labels[k]; g.fillText(l.text, l.x, l.y); }
      const X = (t) => x0 + (x1 - x0) * (t - T0) / DUR, Y = (v) => y1 - (y1 - y0) * (v - P.lo) / (P.hi - P.lo);
      g.save(); g.beginPath(); g.rect(x0, y0, x1 - x0, y1 - y0); g.clip();
      P.series.forEach((s, k) => {
        g.strokeStyle = s.color; g.setLineDash(s.dash);
        g.lineWidth = P.highlight === k ? 2.6 : 1.2; g.globalAlpha = P.highlight >= 0 && P.highlight !== k ? 0.25 : 1;
        g.beginPath();
        for (let i = 0; i < s.y.length; i++) { const x = X(PT[i]), y = Y(s.y[i]); if (i) g.lineTo(x, y); else g.moveTo(x, y); }
        g.stroke();
      });
      g.restore(); g.globalAlpha = 1; g.setLineDash([]);
      g.strokeStyle = "#000"; g.lineWidth = 1; g.beginPath(); g.moveTo(X(state.t), y0); g.lineTo(X(state.t), y1); g.stroke();
    }
  }

  // ---------- render loop -----------------------------------------------------------------------
  let last = null, poses = null;
  const L1 = norm([0.4, 0.3, 1]), L2 = norm([-0.6, -0.2, -0.4]);
  function render() {
    const W = canvas.clientWidth, H = canvas.clientHeight, dpr = window.devicePixelRatio || 1;
    if (canvas.width !== Math.round(W * dpr) || canvas.height !== Math.round(H * dpr)) {
      canvas.width = Math.round(W * dpr); canvas.height = Math.round(H * dpr);
    }
    poses = bodyPoses(qAt(state.t));
    const fb = parseInt(ui.follow.value, 10);
    let target = view.target;
    if (fb >= 0) target = add(poses[fb].p, mv3(poses[fb].R, cam.body !== null && String(cam.body) === ui.follow.value ? cam.track_point : [0, 0, 0]));
    target = add(target, view.pan);
    const eye = add(target, scl(eyeDir(), view.dist));
    const VP = mul4(perspective(0.7, canvas.width / Math.max(canvas.height, 1), view.dist * 0.01, view.dist * 50), lookAt(eye, target, camUp));
    // lights follow the camera so the lit side is always the visible one
    const d = eyeDir(), right = norm(cross(camUp, d)), upv = cross(d, right);
    const l1 = norm(add(add(scl(d, L1[2]), scl(right, L1[0])), scl(upv, L1[1]))), l2 = norm(add(add(scl(d, L2[2]), scl(right, L2[0])), scl(upv, L2[1])));
    gl.viewport(0, 0, canvas.width, canvas.height);
    gl.clearColor(0.93, 0.94, 0.96, 1); gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
    gl.enable(gl.DEPTH_TEST); gl.enable(gl.BLEND); gl.blendFunc(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA);
    const showFrames = ui.frames.checked;
    const bodyM = [ID4].concat(poses.map((P) => mat4(P.R, P.p)));
    for (const pass of [0, 1]) {  // opaque first, then transparent
      for (const D of drawables) {
        if (!D.lines && ((D.color[3] < 1) !== (pass === 1))) continue;
        if (D.lines && pass === 1) continue;
        if (!showFrames && frameDrawables.includes(D)) continue;
        const model = mul4(bodyM[D.body + 1], D.local);
        if (D.lines) {
          gl.useProgram(flat);
          gl.uniformMatrix4fv(gl.getUniformLocation(flat, "uModel"), false, model);
          gl.uniformMatrix4fv(gl.getUniformLocation(flat, "uVP"), false, VP);
          bind(flat, "aPos", D.vbo); bind(flat, "aCol", D.cbo);
          gl.drawArrays(D.lines, 0, D.count);
        } else {
          gl.useProgram(surf);
          gl.uniformMatrix4fv(gl.getUniformLocation(surf, "uModel"), false, model);
          gl.uniformMatrix4fv(gl.getUniformLocation(surf, "uVP"), false, VP);
          gl.uniform4fv(gl.getUniformLocation(surf, "uColor"), D.color);
          gl.uniform3fv(gl.getUniformLocation(surf, "uEye"), eye);
          gl.uniform3fv(gl.getUniformLocation(surf, "uL1"), l1);
          gl.uniform3fv(gl.getUniformLocation(surf, "uL2"), l2);
          bind(surf, "aPos", D.vbo); bind(surf, "aNrm", D.nbo);
          gl.drawArrays(gl.TRIANGLES, 0, D.count);
        }
      }
    }
    if (contactBuf && ui.contacts.checked) {
      const L = contactLines(state.t);
      if (L.pts.length) {
        gl.disable(gl.DEPTH_TEST);    // arrows start inside the contact: always drawn on top
        gl.useProgram(flat);
        gl.uniformMatrix4fv(gl.getUniformLocation(flat, "uModel"), false, ID4);
        gl.uniformMatrix4fv(gl.getUniformLocation(flat, "uVP"), false, VP);
        gl.bindBuffer(gl.ARRAY_BUFFER, contactBuf.vbo); gl.bufferData(gl.ARRAY_BUFFER, new Float32Array(L.pts), gl.DYNAMIC_DRAW);
        bind(flat, "aPos", contactBuf.vbo);
        gl.bindBuffer(gl.ARRAY_BUFFER, contactBuf.cbo); gl.bufferData(gl.ARRAY_BUFFER, new Float32Array(L.cols), gl.DYNAMIC_DRAW);
        bind(flat, "aCol", contactBuf.cbo);
        gl.drawArrays(gl.LINES, 0, L.pts.length / 3);
        gl.enable(gl.DEPTH_TEST);
      }
    }
    ui.time.textContent = "t = " + state.t.toFixed(3) + " s";
    drawPlots();
    frames++;
  }
  const attribs = new Map();
  function bind(prog, name, buf) {
    const key = prog === surf ? "s" + name : "f" + name;
    if (!attribs.has(key)) attribs.set(key, gl.getAttribLocation(prog, name));
    const loc = attribs.get(key);
    gl.bindBuffer(gl.ARRAY_BUFFER, buf);
    gl.enableVertexAttribArray(loc);
    gl.vertexAttribPointer(loc, 3, gl.FLOAT, false, 0, 0);
  }
  let frames = 0;
  function tick(now) {
    if (state.playing) {
      if (last !== null) {
        let t = state.t + state.speed * (now - last) / 1000;
        if (t > T1 || t < T0) {
          if (ui.loop.checked) t = T0 + ((((t - T0) % DUR) + DUR) % DUR);
          else { t = Math.min(T1, Math.max(T0, t)); setPlaying(false); }
        }
        setTime(t);
      }
      last = now;
    }
    if (dirty || state.playing) { render(); dirty = false; }
    requestAnimationFrame(tick);
  }
  window.addEventListener("resize", () => { dirty = true; });

  // metadata
  $("sm-title").textContent = DATA.meta.title || M.name;
  $("sm-author").textContent = DATA.meta.author ? "by " + DATA.meta.author : "";
  $("sm-date").textContent = DATA.meta.date || "";
  $("sm-desc").textContent = DATA.meta.description || "";
  $("sm-info").textContent = M.name + " · " + M.nb + " bodies · " + NS + " samples over " + DUR.toFixed(3) + " s" +
    (DATA.motion.default ? " · default animation: each joint ramped in turn" : "");

  // a small API for scripts and tests
  window.showmotion = {
    data: DATA, setTime, time: () => state.t, play: () => setPlaying(true), pause: () => setPlaying(false),
    isPlaying: () => state.playing, setSpeed, bodyPoses, qAt, frames: () => frames, range: [T0, T1],
    render: () => { render(); return frames; }, ready: true,
    contactArrows: () => (contactBuf && ui.contacts.checked ? contactArrows(state.t) : []),
    contactScale: CT ? CT.scale : null,
    plotLayouts: () => plotCanvases.map((P) => Object.assign({ id: P.c.id }, plotLayout(P))),
  };
  render();
  requestAnimationFrame(tick);
})();

// The compiled sampler (sampler.c) in JavaScript, for the browser door: NUTS (Stan's multinomial
// variant) and static HMC transitions, dual averaging and windowed diagonal-metric adaptation,
// one chain at a time, on the same per-chain Philox-4x32-10 streams as runtime/ppl/chain_rng.py.
//
// Why: in Pyodide the NumPy sampler pays Python's overhead at every leapfrog step; this runs a
// whole block of iterations in the worker's JavaScript against a JavaScript log density.
//
// A port of sampler.c statement by statement: every floating-point operation is the C code's
// (and so the NumPy sampler's), in the same order; row sums use NumPy's pairwise summation
// (sumNp). Philox words and uniforms are bit for bit the C/Python ones. What differs is the
// libm: Math.log/cos/sin/exp/log1p/pow (V8's fdlibm ports) may round differently from glibc by
// an ulp (a few percent of calls), so a normal can differ in its last bit and a chain drifts from
// the C/Python chain at rounding level from there on (Box-Muller normals within a few ulps).
//
// A plain script, not a module: the runtime evaluates this text as the body of
// `new Function(src + "\nreturn makeSampler();")`; it touches no global. Vectors are
// Float64Arrays; every work array is allocated once per chain, none per leapfrog step.
/* exported makeSampler */

/**
 * The sampler's namespace: philox4x32, Rng, nutsTransition, hmcTransition, Chain, newOutput.
 * A density is `fn(q, logpOut, grad) -> status` (q: Float64Array[n]; it writes the log density
 * to logpOut[0] and its gradient to grad; status 0, or a nonzero number for a numerical failure,
 * taken as log density -Infinity: a divergence). An exception in fn propagates to the caller
 * (and ends a Chain).
 */
function makeSampler() {
  "use strict";

  // ---------------------------------------------------------------------------- Philox
  const M0H = 0xD251, M0L = 0x1F53, M0 = 0xD2511F53;  // multipliers, with 16-bit halves
  const M1H = 0xCD9E, M1L = 0x8D57, M1 = 0xCD9E8D57;
  const W0 = 0x9E3779B9, W1 = 0xBB67AE85;
  const INV65536 = 1 / 65536;
  const TWO_M53 = 1 / 9007199254740992;  // 2^-53
  const TWO_PI = 2.0 * 3.141592653589793;
  const LN2 = 0.6931471805599453;  // log(2) rounded, as the C literal
  const PURPOSE_TRANSITION = 0, PURPOSE_STEP_SEARCH = 1;

  // The 64-bit products: the low word is Math.imul's; the high word is exact in doubles from
  // 16-bit halves of the multiplier: M c = 2^16 (MH c + floor(ML c / 2^16)) + (ML c mod 2^16),
  // every term below 2^53, so hi = floor((MH c + floor(ML c / 2^16)) / 2^16).
  const blk = new Uint32Array(4);

  /** One block into blk (c*, k*: uint32 numbers). */
  function philoxInto(c0, c1, c2, c3, k0, k1) {
    for (let r = 0; r < 10; r++) {
      const hi0 = Math.floor((M0H * c0 + Math.floor(M0L * c0 * INV65536)) * INV65536);
      const lo0 = Math.imul(M0, c0) >>> 0;
      const hi1 = Math.floor((M1H * c2 + Math.floor(M1L * c2 * INV65536)) * INV65536);
      const lo1 = Math.imul(M1, c2) >>> 0;
      c0 = (hi1 ^ c1 ^ k0) >>> 0;
      c2 = (hi0 ^ c3 ^ k1) >>> 0;
      c1 = lo1;
      c3 = lo0;
      k0 = (k0 + W0) >>> 0;
      k1 = (k1 + W1) >>> 0;
    }
    blk[0] = c0;
    blk[1] = c1;
    blk[2] = c2;
    blk[3] = c3;
  }

  /** tb_philox4x32: four words from a counter (4 words) and a key (2 words). */
  function philox4x32(ctr, key) {
    philoxInto(ctr[0] >>> 0, ctr[1] >>> 0, ctr[2] >>> 0, ctr[3] >>> 0, key[0] >>> 0,
               key[1] >>> 0);
    return Uint32Array.from(blk);
  }

  function uniform53(w0, w1) {
    return ((w0 >>> 5) * 67108864.0 + (w1 >>> 6)) * TWO_M53;
  }

  function checkWord(v, what) {
    if (!Number.isInteger(v) || v < 0 || v > 0xFFFFFFFF)
      throw new RangeError(what + ": expected an integer in 0..2^32-1, got " + v);
  }

  /** A chain's stream (tb_rng): key, then counter (block, iteration, purpose). */
  class Rng {
    constructor(key0, key1) {
      checkWord(key0, "key0");
      checkWord(key1, "key1");
      this.k0 = key0 >>> 0;
      this.k1 = key1 >>> 0;
      this.iteration = 0;
      this.purpose = 0;
      this.blockLo = 0;  // counter words 0 and 1: the next block
      this.blockHi = 0;
      this.buf0 = 0.0;  // a block's two uniforms
      this.buf1 = 0.0;
      this.pos = 2;  // next unread entry of the buffer (2: empty)
    }

    restart(iteration, purpose) {
      this.iteration = iteration >>> 0;
      this.purpose = purpose >>> 0;
      this.blockLo = 0;
      this.blockHi = 0;
      this.pos = 2;
    }

    /** The next uniform in [0, 1): chain_rng reads its stream as a plain sequence. */
    uniform() {
      if (this.pos === 2) {
        philoxInto(this.blockLo, this.blockHi, this.iteration, this.purpose, this.k0, this.k1);
        this.buf0 = uniform53(blk[0], blk[1]);
        this.buf1 = uniform53(blk[2], blk[3]);
        this.blockLo = (this.blockLo + 1) >>> 0;
        if (this.blockLo === 0) this.blockHi = (this.blockHi + 1) >>> 0;
        this.pos = 1;
        return this.buf0;
      }
      this.pos = 2;
      return this.buf1;
    }

    /** m standard normals into out from 2 ceil(m / 2) uniforms (Box-Muller, both outputs). */
    normals(m, out) {
      for (let k = 0; k < m; k += 2) {
        const u1 = this.uniform(), u2 = this.uniform();
        const rad = Math.sqrt(-2.0 * Math.log(1.0 - u1));
        const t = TWO_PI * u2;
        out[k] = rad * Math.cos(t);
        if (k + 1 < m) out[k + 1] = rad * Math.sin(t);
      }
    }
  }

  // ------------------------------------------------------------------- NumPy arithmetic

  /** np.add.reduce of a[off .. off + n): NumPy's pairwise summation (8 accumulators per block
   * of up to 128, halves above), without the identity (callers add 0.0 as the C code does). */
  function sumNp(a, off, n) {
    if (n < 8) {
      let res = 0.0;
      for (let i = 0; i < n; i++) res += a[off + i];
      return res;
    }
    if (n <= 128) {
      let r0 = a[off], r1 = a[off + 1], r2 = a[off + 2], r3 = a[off + 3];
      let r4 = a[off + 4], r5 = a[off + 5], r6 = a[off + 6], r7 = a[off + 7];
      const end = off + (n - (n % 8));
      let i = off + 8;
      for (; i < end; i += 8) {
        r0 += a[i];
        r1 += a[i + 1];
        r2 += a[i + 2];
        r3 += a[i + 3];
        r4 += a[i + 4];
        r5 += a[i + 5];
        r6 += a[i + 6];
        r7 += a[i + 7];
      }
      let res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7));
      for (const stop = off + n; i < stop; i++) res += a[i];
      return res;
    }
    let n2 = Math.trunc(n / 2);
    n2 -= n2 % 8;
    return sumNp(a, off, n2) + sumNp(a, off + n2, n - n2);
  }

  function dotNp(a, b, n, tmp) {
    if (n < 8) {  // the same operations as through tmp, without it
      let res = 0.0;
      for (let j = 0; j < n; j++) res += a[j] * b[j];
      return 0.0 + res;
    }
    for (let j = 0; j < n; j++) tmp[j] = a[j] * b[j];
    return 0.0 + sumNp(tmp, 0, n);
  }

  /** dst[0 .. n) = src[0 .. n): a plain loop (TypedArray.prototype.set costs more than the
   * copy at these sizes) */
  function copy(dst, src, n) {
    for (let j = 0; j < n; j++) dst[j] = src[j];
  }

  /** np.logaddexp */
  function logaddexp(x, y) {
    if (x === y) return x + LN2;
    const d = x - y;
    if (d > 0) return x + Math.log1p(Math.exp(-d));
    if (d <= 0) return y + Math.log1p(Math.exp(d));
    return d;  // NaN
  }

  /** -logp + 0.5 * sum(p * p * inv); a NaN energy is infinitely bad */
  function hamiltonian(p, logp, inv, n, tmp) {
    for (let j = 0; j < n; j++) tmp[j] = p[j] * p[j] * inv[j];
    const h = -logp + 0.5 * (0.0 + sumNp(tmp, 0, n));
    return h !== h ? Infinity : h;
  }

  /** The density; a failure is a point of log density -Infinity (a divergence), and so is a
   * log density of +Infinity (sampler.c's evaluate). Writes the log density to lp[0]; returns 1
   * when the density failed. */
  function evaluate(fn, q, n, lp, grad) {
    const status = fn(q, lp, grad);
    if (status !== 0 || lp[0] === Infinity) {
      if (typeof status !== "number")
        throw new TypeError("density: expected a number status (0: success), got " + status);
      lp[0] = -Infinity;
      for (let j = 0; j < n; j++) grad[j] = NaN;
      return 1;
    }
    return 0;
  }

  /** hamiltonian.leapfrog with a signed step; the new logp in lp[0]; 1 when the density failed */
  function leapfrog(q, p, lp, g, e, inv, n, fn) {
    const half = 0.5 * e;
    for (let j = 0; j < n; j++) {
      p[j] = p[j] + half * g[j];
      q[j] = q[j] + e * inv[j] * p[j];
    }
    const failed = evaluate(fn, q, n, lp, g);
    for (let j = 0; j < n; j++) p[j] = p[j] + half * g[j];
    return failed;
  }

  /** A transition's result (tb_stats, with the new point). */
  class Result {
    constructor(q, grad) {
      this.q = q;
      this.logp = 0.0;
      this.grad = grad;
      this.acceptStat = 0.0;
      this.nLeapfrog = 0;
      this.treeDepth = 0;
      this.divergent = false;
      this.energy = 0.0;
    }
  }

  // ------------------------------------------------------------------------ workspace

  /** A subtree: its momenta sum, end momenta and velocities (beg/end in integration order),
   * its multinomial proposal, log weight and validity. */
  class Tree {
    constructor(take) {
      this.rho = take();
      this.pBeg = take();
      this.psBeg = take();
      this.pEnd = take();
      this.psEnd = take();
      this.propQ = take();
      this.propG = take();
      this.propLogp = 0.0;
      this.logW = 0.0;
      this.valid = false;
    }
  }

  const TREE_ARRAYS = 7;

  class Work {
    constructor(n, maxDepth) {
      const nTrees = maxDepth + 1;
      const block = new Float64Array((nTrees * TREE_ARRAYS + 3 + 1 + 8 + 9) * n);
      let at = 0;
      const take = () => {
        const a = block.subarray(at, at + n);
        at += n;
        return a;
      };
      this.n = n;
      this.maxDepth = maxDepth;
      this.trees = [];  // the top-level subtree and one temporary per level
      for (let t = 0; t < nTrees; t++) this.trees.push(new Tree(take));
      this.curQ = take();  // the far end of the integration
      this.curP = take();
      this.curG = take();
      this.curLogp = 0.0;
      this.eInv = take();  // signed step times inverse metric
      this.fwd = [];  // tree ends: q, p, grad, M^-1 p
      this.bwd = [];
      for (let k = 0; k < 4; k++) {
        this.fwd.push(take());
        this.bwd.push(take());
      }
      this.rho = take();
      this.sampleQ = take();
      this.sampleG = take();
      this.tmp = take();
      this.tmp2 = take();
      this.tmp3 = take();
      this.q0 = take();
      this.p0 = take();
      this.g0 = take();
      this.lp = new Float64Array(1);  // the density's logp output
      this.metro = new Float64Array(0);  // per-leaf acceptances, kept only to sum them pairwise
      this.builder = new Builder(this);
    }
  }

  // ----------------------------------------------------------------------------- NUTS

  class Builder {
    constructor(w) {
      this.w = w;
      this.inv = w.tmp;
      this.halfE = 0.0;
      this.h0 = 0.0;
      this.maxDeltaH = 0.0;
      this.fn = null;
      this.rng = null;
      this.pairwiseAccept = false;
      this.nLeapfrog = 0;
      this.sumMetro = 0.0;
      this.divergent = false;
    }
  }

  /** One leapfrog step from the far end; nuts.py's _Builder._leaf. */
  function leaf(b, out) {
    const w = b.w, n = w.n, half = b.halfE, inv = b.inv;
    const cq = w.curQ, cp = w.curP, cg = w.curG, ei = w.eInv;
    for (let j = 0; j < n; j++) {
      cp[j] = cp[j] + half * cg[j];
      cq[j] = cq[j] + ei[j] * cp[j];
    }
    evaluate(b.fn, cq, n, w.lp, cg);
    const logp = w.curLogp = w.lp[0];
    const rho = out.rho, pBeg = out.pBeg, pEnd = out.pEnd, psBeg = out.psBeg, psEnd = out.psEnd;
    for (let j = 0; j < n; j++) {
      const p = cp[j] + half * cg[j];
      cp[j] = p;
      rho[j] = pBeg[j] = pEnd[j] = p;
      psBeg[j] = psEnd[j] = inv[j] * p;
    }
    const kin = 0.5 * dotNp(cp, psEnd, n, w.tmp);
    let logW = b.h0 - (kin - logp);
    if (logW !== logW) logW = -Infinity;
    copy(out.propQ, cq, n);
    copy(out.propG, cg, n);
    out.propLogp = logp;
    out.logW = logW;
    out.valid = logW >= -b.maxDeltaH;
    const metro = Math.exp(logW < 0.0 ? logW : 0.0);
    if (b.pairwiseAccept) {
      if (b.nLeapfrog === w.metro.length) {
        const grown = new Float64Array(w.metro.length ? 2 * w.metro.length : 64);
        grown.set(w.metro);
        w.metro = grown;
      }
      w.metro[b.nLeapfrog] = metro;
    }
    b.nLeapfrog++;
    b.sumMetro += metro;
    if (-logW > b.maxDeltaH) b.divergent = true;
  }

  /** Stan's generalised criterion over one span: both end velocities point along its momentum. */
  function spansOk(psA, psB, rho, n, tmp) {
    return dotNp(psA, rho, n, tmp) > 0 && dotNp(psB, rho, n, tmp) > 0;
  }

  /** A subtree of 2^depth leaves into out; trees[depth] holds the second half. Uniforms are read
   * in post-order of the merges, as the rows 2 + k of the doubling's block in nuts.py. */
  function build(b, depth, out) {
    if (depth === 0) {
      leaf(b, out);
      return;
    }
    build(b, depth - 1, out);
    if (!out.valid) return;  // like Stan: the second half is not integrated, no row read
    const w = b.w, n = w.n;
    const fin = w.trees[depth];
    build(b, depth - 1, fin);
    const logU = Math.log(b.rng.uniform());
    const logW = logaddexp(out.logW, fin.logW);
    if (logU < fin.logW - logW) {
      let t = out.propQ;
      out.propQ = fin.propQ;
      fin.propQ = t;
      t = out.propG;
      out.propG = fin.propG;
      fin.propG = t;
      out.propLogp = fin.propLogp;
    }
    out.logW = logW;
    if (!fin.valid) {
      out.valid = false;  // the chain stops: nothing else of this tree is read
      return;
    }
    const rho = w.tmp2, oRho = out.rho, fRho = fin.rho;
    for (let j = 0; j < n; j++) rho[j] = oRho[j] + fRho[j];
    let persist = spansOk(out.psBeg, fin.psEnd, rho, n, w.tmp);
    if (depth !== 1) {  // two leaves: the three spans are the same span
      const r = w.tmp3;
      if (persist) {
        const fpBeg = fin.pBeg;
        for (let j = 0; j < n; j++) r[j] = oRho[j] + fpBeg[j];
        persist = spansOk(out.psBeg, fin.psBeg, r, n, w.tmp);
      }
      if (persist) {
        const opEnd = out.pEnd;
        for (let j = 0; j < n; j++) r[j] = fRho[j] + opEnd[j];
        persist = spansOk(out.psEnd, fin.psEnd, r, n, w.tmp);
      }
    }
    out.rho = rho;
    w.tmp2 = oRho;
    let t = out.pEnd;
    out.pEnd = fin.pEnd;
    fin.pEnd = t;
    t = out.psEnd;
    out.psEnd = fin.psEnd;
    fin.psEnd = t;
    out.valid = persist;
  }

  /** nuts_impl: the new point into qOut, gradOut (which may alias q, grad) and res. */
  function nutsImpl(w, q, logp, grad, step, inv, fn, rng, maxDepth, maxDeltaH, pairwiseAccept,
                    qOut, gradOut, res) {
    const n = w.n;
    const p0 = w.p0;
    rng.normals(n, p0);
    for (let j = 0; j < n; j++) p0[j] = p0[j] / Math.sqrt(inv[j]);
    const h0 = hamiltonian(p0, logp, inv, n, w.tmp);
    const b = w.builder;
    b.inv = inv;
    b.halfE = 0.0;
    b.h0 = h0;
    b.maxDeltaH = maxDeltaH;
    b.fn = fn;
    b.rng = rng;
    b.pairwiseAccept = pairwiseAccept;
    b.nLeapfrog = 0;
    b.sumMetro = 0.0;
    b.divergent = false;

    const fwd = w.fwd, bwd = w.bwd;
    copy(fwd[0], q, n);
    copy(fwd[1], p0, n);
    copy(fwd[2], grad, n);
    const f3 = fwd[3];
    for (let j = 0; j < n; j++) f3[j] = inv[j] * p0[j];
    for (let k = 0; k < 4; k++) copy(bwd[k], fwd[k], n);
    copy(w.rho, p0, n);
    copy(w.sampleQ, q, n);
    copy(w.sampleG, grad, n);
    let sampleLogp = logp, logWeight = 0.0;
    let depth = 0;
    const sub = w.trees[0];

    for (let d = 0; d < maxDepth; d++) {
      const forward = rng.uniform() > 0.5;
      const logU = Math.log(rng.uniform());
      const near = forward ? fwd : bwd, far = forward ? bwd : fwd;
      copy(w.curQ, near[0], n);
      copy(w.curP, near[1], n);
      copy(w.curG, near[2], n);
      const e = forward ? step : -step;
      b.halfE = forward ? 0.5 * step : -0.5 * step;
      const eInv = w.eInv;
      for (let j = 0; j < n; j++) eInv[j] = e * inv[j];
      build(b, d, sub);
      if (!sub.valid) break;
      // biased progressive sampling between the old tree and the new subtree
      if (logU < sub.logW - logWeight) {
        let t = w.sampleQ;
        w.sampleQ = sub.propQ;
        sub.propQ = t;
        t = w.sampleG;
        w.sampleG = sub.propG;
        sub.propG = t;
        sampleLogp = sub.propLogp;
      }
      logWeight = logaddexp(logWeight, sub.logW);
      // no-U-turn across the merged tree and across the seam, both ways
      const newRho = w.tmp2, r = w.tmp3, rho = w.rho, sRho = sub.rho;
      for (let j = 0; j < n; j++) newRho[j] = rho[j] + sRho[j];
      let persist = spansOk(far[3], sub.psEnd, newRho, n, w.tmp);
      if (persist) {
        const spBeg = sub.pBeg;
        for (let j = 0; j < n; j++) r[j] = rho[j] + spBeg[j];
        persist = spansOk(far[3], sub.psBeg, r, n, w.tmp);
      }
      if (persist) {
        const np1 = near[1];
        for (let j = 0; j < n; j++) r[j] = sRho[j] + np1[j];
        persist = spansOk(near[3], sub.psEnd, r, n, w.tmp);
      }
      w.rho = newRho;
      w.tmp2 = rho;
      let t = near[0];
      near[0] = w.curQ;
      w.curQ = t;
      t = near[1];
      near[1] = w.curP;
      w.curP = t;
      t = near[2];
      near[2] = w.curG;
      w.curG = t;
      t = near[3];
      near[3] = sub.psEnd;
      sub.psEnd = t;
      depth++;
      if (!persist) break;
    }
    const nLeapfrog = b.nLeapfrog;
    if (pairwiseAccept) b.sumMetro = 0.0 + sumNp(w.metro, 0, nLeapfrog);
    copy(qOut, w.sampleQ, n);
    copy(gradOut, w.sampleG, n);
    res.logp = sampleLogp;
    res.nLeapfrog = nLeapfrog;
    res.acceptStat = b.sumMetro / (nLeapfrog > 1 ? nLeapfrog : 1);
    res.treeDepth = depth;
    res.divergent = b.divergent;
    res.energy = h0;
    b.fn = null;  // hold no reference to the density or stream between transitions
    b.rng = null;
  }

  // ----------------------------------------------------------------------- static HMC

  function hmcImpl(w, q, logp, grad, step, inv, fn, rng, nLeapfrog, jitter, maxDeltaH, qOut,
                   gradOut, res) {
    const n = w.n;
    const zq = w.curQ, zp = w.curP, zg = w.curG, lp = w.lp;
    rng.normals(n, zp);
    for (let j = 0; j < n; j++) zp[j] = zp[j] / Math.sqrt(inv[j]);
    const h0 = hamiltonian(zp, logp, inv, n, w.tmp);
    // jitter the step +-10% (rng.uniform(0.9, 1.1)) against resonant periodic orbits
    const eps = step * (jitter ? 0.9 + (1.1 - 0.9) * rng.uniform() : 1.0);
    copy(zq, q, n);
    copy(zg, grad, n);
    lp[0] = logp;
    let divergent = false, failed = 0;
    for (let s = 0; s < nLeapfrog && !failed; s++) {
      // after a failure the energy stays infinite, as a NaN propagates in the Python sampler:
      // the rest of the trajectory is not integrated
      failed = leapfrog(zq, zp, lp, zg, eps, inv, n, fn);
      if (hamiltonian(zp, lp[0], inv, n, w.tmp) - h0 > maxDeltaH) divergent = true;
    }
    const zlogp = lp[0];
    const h = failed ? Infinity : hamiltonian(zp, zlogp, inv, n, w.tmp);
    let logAccept = h0 - h;
    if (!(logAccept < 0.0) && logAccept === logAccept) logAccept = 0.0;  // np.minimum keeps NaN
    const accept = Math.log(rng.uniform()) < logAccept && !divergent;
    if (accept) {
      copy(qOut, zq, n);
      copy(gradOut, zg, n);
      res.logp = zlogp;
    } else {
      if (qOut !== q) copy(qOut, q, n);
      if (gradOut !== grad) copy(gradOut, grad, n);
      res.logp = logp;
    }
    res.acceptStat = Math.exp(logAccept);
    res.nLeapfrog = nLeapfrog;
    res.treeDepth = 0;
    res.divergent = divergent;
    res.energy = h0;
  }

  function vector(a, n, what) {
    if (a === null || typeof a !== "object" || a.length !== n)
      throw new RangeError(what + ": expected " + n + " numbers, got " +
                           (a !== null && typeof a === "object" ? a.length : String(a)));
    return a instanceof Float64Array ? a : Float64Array.from(a);
  }

  function checkInt(v, lo, hi, what) {
    if (!Number.isInteger(v) || v < lo || v > hi)
      throw new RangeError(what + ": expected an integer in " + lo + ".." + hi + ", got " + v);
  }

  function checkNumber(v, ok, expected, what) {
    if (typeof v !== "number" || !ok(v))
      throw new RangeError(what + ": expected " + expected + ", got " + v);
  }

  function checkFlag(v, what) {
    if (v !== true && v !== false && v !== 0 && v !== 1)
      throw new RangeError(what + ": expected a boolean (or 0/1), got " + v);
    return v === true || v === 1;
  }

  function checkFn(fn) {
    if (typeof fn !== "function")
      throw new TypeError("fn: expected a density function (q, logpOut, grad) -> status");
  }

  /** An Rng, or an object with its methods (a test replaying given numbers, say). */
  function checkRng(rng, restart) {
    if (rng === null || typeof rng !== "object" || typeof rng.uniform !== "function" ||
        typeof rng.normals !== "function" || (restart && typeof rng.restart !== "function"))
      throw new TypeError("rng: expected an Rng (uniform(), normals(m, out)" +
                          (restart ? ", restart(iteration, purpose))" : ")"));
  }

  function transitionArgs(n, q, grad, invMetric, fn, rng) {
    checkInt(n, 0, 0x7FFFFFFF, "n");
    checkFn(fn);
    checkRng(rng, false);
    return [vector(q, n, "q"), vector(grad, n, "grad"), vector(invMetric, n, "invMetric")];
  }

  /** tb_nuts_transition: one NUTS transition of one chain from q (with its logp and grad),
   * reading rng from where it stands (restart it first). Returns a new Result. */
  function nutsTransition(n, q, logp, grad, step, invMetric, fn, rng, maxDepth, maxDeltaH,
                          pairwiseAccept) {
    const [qa, ga, inv] = transitionArgs(n, q, grad, invMetric, fn, rng);
    checkInt(maxDepth, 1, 30, "maxDepth");
    const pw = checkFlag(pairwiseAccept, "pairwiseAccept");
    const w = new Work(n, maxDepth);
    const res = new Result(new Float64Array(n), new Float64Array(n));
    nutsImpl(w, qa, +logp, ga, +step, inv, fn, rng, maxDepth, +maxDeltaH, pw, res.q, res.grad,
             res);
    return res;
  }

  /** tb_hmc_transition: one static-HMC transition, as nutsTransition. */
  function hmcTransition(n, q, logp, grad, step, invMetric, fn, rng, nLeapfrog, jitter,
                         maxDeltaH) {
    const [qa, ga, inv] = transitionArgs(n, q, grad, invMetric, fn, rng);
    checkInt(nLeapfrog, 0, 0x7FFFFFFF, "nLeapfrog");
    const jit = checkFlag(jitter, "jitter");
    const w = new Work(n, 0);
    const res = new Result(new Float64Array(n), new Float64Array(n));
    hmcImpl(w, qa, +logp, ga, +step, inv, fn, rng, nLeapfrog, jit, +maxDeltaH, res.q, res.grad,
            res);
    return res;
  }

  // ----------------------------------------------------------------------- adaptation

  const LOG08 = Math.log(0.8);

  /** Stan's heuristic (adaptation.find_reasonable_step) for one chain: double or halve the step
   * until one leapfrog step's acceptance crosses 0.8. */
  function findReasonableStep(w, q, logp, grad, step, inv, fn, rng) {
    const n = w.n;
    const zq = w.curQ, zp = w.curP, zg = w.curG, lp = w.lp;
    let direction = 0.0;
    for (let round = -1; round < 100; round++) {
      rng.normals(n, zp);
      for (let j = 0; j < n; j++) zp[j] = zp[j] / Math.sqrt(inv[j]);
      const h0 = hamiltonian(zp, logp, inv, n, w.tmp);
      copy(zq, q, n);
      copy(zg, grad, n);
      leapfrog(zq, zp, lp, zg, step, inv, n, fn);
      const dh = h0 - hamiltonian(zp, lp[0], inv, n, w.tmp);
      if (round < 0) {
        direction = dh > LOG08 ? 1.0 : -1.0;
        continue;
      }
      if (direction > 0 ? !(dh > LOG08) : !(dh < LOG08)) break;
      step = direction > 0 ? step * 2.0 : step * 0.5;
      step = step < 1e-10 ? 1e-10 : (step > 1e7 ? 1e7 : step);
    }
    return step;
  }

  /** Dual averaging of the log step (Hoffman & Gelman 2014). */
  class Dual {
    constructor(delta) {
      this.delta = delta;
      this.gamma = 0.05;
      this.t0 = 10.0;
      this.kappa = 0.75;
      this.mu = 0.0;
      this.sBar = 0.0;
      this.xBar = 0.0;
      this.counter = 0;
    }

    restart(step) {
      this.mu = Math.log(10.0 * step);
      this.sBar = 0.0;
      this.xBar = 0.0;
      this.counter = 0;
    }

    update(acceptStat) {
      const counter = ++this.counter;
      let a = acceptStat !== acceptStat ? 0.0 : acceptStat;
      a = a < 1.0 ? a : 1.0;
      const eta = 1.0 / (counter + this.t0);
      this.sBar = (1 - eta) * this.sBar + eta * (this.delta - a);
      const x = this.mu - this.sBar * Math.sqrt(counter) / this.gamma;
      const xEta = Math.pow(counter, -this.kappa);
      this.xBar = xEta * x + (1 - xEta) * this.xBar;
      return Math.exp(x);
    }
  }

  /** Stan's windowed-adaptation schedule (adaptation.WindowSchedule). */
  class Windows {
    constructor(numWarmup) {
      let initBuffer = 75, termBuffer = 50, baseWindow = 25;
      this.numWarmup = numWarmup;
      this.enabled = numWarmup >= 20;
      if (initBuffer + baseWindow + termBuffer > numWarmup) {
        initBuffer = Math.trunc(0.15 * numWarmup);
        termBuffer = Math.trunc(0.1 * numWarmup);
        baseWindow = numWarmup - (initBuffer + termBuffer);
      }
      this.initBuffer = initBuffer;
      this.termBuffer = termBuffer;
      this.windowSize = baseWindow;
      this.nextWindowEnd = initBuffer + baseWindow - 1;
    }

    inWindow(i) {
      return this.enabled && this.initBuffer <= i && i < this.numWarmup - this.termBuffer;
    }

    /** True at the last iteration of a window; advances to the next window. */
    windowEnds(i) {
      if (!this.enabled || i !== this.nextWindowEnd || i === this.numWarmup) return false;
      const last = this.numWarmup - this.termBuffer - 1;
      if (this.nextWindowEnd !== last) {
        this.windowSize *= 2;
        this.nextWindowEnd = i + this.windowSize;
        if (this.nextWindowEnd !== last && this.nextWindowEnd + 2 * this.windowSize > last)
          this.nextWindowEnd = last;
      }
      return true;
    }
  }

  // ---------------------------------------------------------------------------- chain

  const INT_MAX = 0x7FFFFFFF;

  /** The validated copy of a chain's configuration (tb_chain_config; every field required). */
  function chainConfig(cfg) {
    if (cfg === null || typeof cfg !== "object")
      throw new TypeError("cfg: expected an object with the chain's configuration");
    checkInt(cfg.n, 0, INT_MAX, "cfg.n");
    if (cfg.kind !== 0 && cfg.kind !== 1)
      throw new RangeError("cfg.kind: expected 0 (NUTS) or 1 (static HMC), got " + cfg.kind);
    if (cfg.kind === 0) checkInt(cfg.maxDepth, 1, 30, "cfg.maxDepth");
    else checkInt(cfg.maxDepth, 0, INT_MAX, "cfg.maxDepth");
    checkInt(cfg.nLeapfrog, cfg.kind === 1 ? 1 : 0, INT_MAX, "cfg.nLeapfrog");
    const c = {
      n: cfg.n, kind: cfg.kind, maxDepth: cfg.maxDepth, nLeapfrog: cfg.nLeapfrog,
      jitter: checkFlag(cfg.jitter, "cfg.jitter"),
      adaptStep: checkFlag(cfg.adaptStep, "cfg.adaptStep"),
      pairwiseAccept: checkFlag(cfg.pairwiseAccept, "cfg.pairwiseAccept"),
      targetAccept: cfg.targetAccept, stepSize: cfg.stepSize, maxDeltaH: cfg.maxDeltaH,
      warmup: cfg.warmup, nSamples: cfg.nSamples, thin: cfg.thin, key0: cfg.key0, key1: cfg.key1,
    };
    checkNumber(c.targetAccept, (v) => v > 0 && v < 1, "a probability in (0, 1)",
                "cfg.targetAccept");
    checkNumber(c.stepSize, (v) => v > 0 && v < Infinity, "a finite number > 0", "cfg.stepSize");
    checkNumber(c.maxDeltaH, (v) => v > 0, "a number > 0", "cfg.maxDeltaH");
    checkInt(c.warmup, 0, INT_MAX, "cfg.warmup");
    checkInt(c.nSamples, 0, INT_MAX, "cfg.nSamples");
    checkInt(c.thin, 1, INT_MAX, "cfg.thin");
    if (c.warmup + c.nSamples * c.thin > INT_MAX)
      throw new RangeError("cfg: warmup + nSamples * thin: expected at most 2^31-1 iterations");
    checkWord(c.key0, "cfg.key0");
    checkWord(c.key1, "cfg.key1");
    return c;
  }

  /** A chain's output arrays (tb_chain_out) for cfg: the kept draws [nSamples, n] and their
   * statistics, and every iteration's divergence (for progress). */
  function newOutput(cfg) {
    const c = chainConfig(cfg);
    const k = c.nSamples;
    return {
      draws: new Float64Array(k * c.n), acceptStat: new Float64Array(k),
      nLeapfrog: new Float64Array(k), treeDepth: new Float64Array(k),
      divergent: new Uint8Array(k), energy: new Float64Array(k), lp: new Float64Array(k),
      iterDivergent: new Uint8Array(c.warmup + k * c.thin),
    };
  }

  function checkOut(out, cfg) {
    if (out === null || typeof out !== "object")
      throw new TypeError("out: expected the chain's output arrays (see newOutput)");
    const k = cfg.nSamples;
    const want = [["draws", Float64Array, k * cfg.n], ["acceptStat", Float64Array, k],
                  ["nLeapfrog", Float64Array, k], ["treeDepth", Float64Array, k],
                  ["divergent", Uint8Array, k], ["energy", Float64Array, k],
                  ["lp", Float64Array, k]];
    for (const [name, type, len] of want) {
      const a = out[name];
      if (!(a instanceof type) || a.length < len)
        throw new RangeError("out." + name + ": expected a " + type.name + " of at least " + len +
                             " entries");
    }
    const it = out.iterDivergent;
    if (it !== null && it !== undefined &&
        !(it instanceof Uint8Array && it.length >= cfg.warmup + k * cfg.thin))
      throw new RangeError("out.iterDivergent: expected null or a Uint8Array of at least " +
                           (cfg.warmup + k * cfg.thin) + " entries");
  }

  /** One chain's warmup and sampling (tb_chain), advanced run(nIter, out) at a time. rng: its
   * stream, by default new Rng(cfg.key0, cfg.key1) (another: tests replaying given numbers). */
  class Chain {
    constructor(cfg, q0, fn, rng) {
      const c = this.cfg = chainConfig(cfg);
      checkFn(fn);
      const n = c.n;
      this.fn = fn;
      this.work = new Work(n, c.kind === 0 ? c.maxDepth : 0);
      this.q = Float64Array.from(vector(q0, n, "q0"));
      this.grad = new Float64Array(n);
      this.inv = new Float64Array(n).fill(1.0);
      this.mean = new Float64Array(n);
      this.m2 = new Float64Array(n);
      this.logp = 0.0;
      this.stepSize = c.stepSize;
      if (rng === undefined) rng = new Rng(c.key0, c.key1);
      else checkRng(rng, true);
      this.rng = rng;
      this.dual = new Dual(c.targetAccept);
      this.windows = new Windows(c.warmup);
      this.welfordN = 0;
      this.started = false;
      this.iter = 0;
      this.nKept = 0;
      this.totalIter = c.warmup + c.nSamples * c.thin;
      this.warmupDiv = 0;
      this.divergences = 0;
      this.res = new Result(this.q, this.grad);
      this.error = null;  // the exception that ended the chain
    }

    /** Advance up to nIter iterations of warmup and sampling exactly as chains.run_chains does
     * for this chain; returns the number run (0 once every iteration is done). An exception from
     * the density (or the stream) propagates and ends the chain: it stopped mid-iteration. */
    run(nIter, out) {
      if (this.error !== null)
        throw new Error("chain: ended by an exception in its density: " + this.error);
      checkInt(nIter, 0, Number.MAX_SAFE_INTEGER, "nIter");
      checkOut(out, this.cfg);
      try {
        return this.advance(nIter, out);
      } catch (e) {
        this.error = e;
        throw e;
      }
    }

    advance(nIter, out) {
      const cfg = this.cfg, n = cfg.n, w = this.work, rng = this.rng, fn = this.fn;
      const res = this.res, q = this.q, grad = this.grad, inv = this.inv;
      if (!this.started) {
        evaluate(fn, q, n, w.lp, grad);
        this.logp = w.lp[0];
        if (cfg.adaptStep) {
          rng.restart(0, PURPOSE_STEP_SEARCH);
          this.stepSize = findReasonableStep(w, q, this.logp, grad, this.stepSize, inv, fn, rng);
        }
        this.dual.restart(this.stepSize);
        this.started = true;
      }
      const iterDiv = out.iterDivergent || null;
      let done = 0;
      for (; done < nIter && this.iter < this.totalIter; done++) {
        const i = this.iter;
        // each chain's numbers depend on (seed, chain, i) only
        rng.restart(i, PURPOSE_TRANSITION);
        if (cfg.kind === 0)
          nutsImpl(w, q, this.logp, grad, this.stepSize, inv, fn, rng, cfg.maxDepth,
                   cfg.maxDeltaH, cfg.pairwiseAccept, q, grad, res);
        else
          hmcImpl(w, q, this.logp, grad, this.stepSize, inv, fn, rng, cfg.nLeapfrog, cfg.jitter,
                  cfg.maxDeltaH, q, grad, res);
        this.logp = res.logp;
        const div = res.divergent;
        if (div) this.divergences++;
        if (iterDiv !== null) iterDiv[i] = div ? 1 : 0;
        if (i < cfg.warmup) {
          if (div) this.warmupDiv++;
          if (cfg.adaptStep) this.stepSize = this.dual.update(res.acceptStat);
          if (this.windows.inWindow(i)) {
            // Welford.add
            const wn = ++this.welfordN, mean = this.mean, m2 = this.m2;
            for (let j = 0; j < n; j++) {
              const delta = q[j] - mean[j];
              mean[j] += delta / wn;
              m2[j] += delta * (q[j] - mean[j]);
            }
          }
          if (this.windows.windowEnds(i)) {
            // regularised_variance: shrink towards 1e-3
            const wn = this.welfordN, m2 = this.m2;
            const denom = wn - 1 > 1 ? wn - 1 : 1;
            for (let j = 0; j < n; j++)
              inv[j] = (wn / (wn + 5.0)) * (m2[j] / denom) + 1e-3 * (5.0 / (wn + 5.0));
            this.welfordN = 0;
            this.mean.fill(0.0);
            m2.fill(0.0);
            if (cfg.adaptStep) {
              rng.restart(i + 1, PURPOSE_STEP_SEARCH);
              this.stepSize = findReasonableStep(w, q, this.logp, grad, this.stepSize, inv, fn,
                                                 rng);
              this.dual.restart(this.stepSize);
            }
          }
          if (i === cfg.warmup - 1 && cfg.adaptStep) this.stepSize = Math.exp(this.dual.xBar);
        } else if ((i - cfg.warmup) % cfg.thin === 0) {
          const k = this.nKept++;
          const draws = out.draws, at = k * n;
          for (let j = 0; j < n; j++) draws[at + j] = q[j];
          out.acceptStat[k] = res.acceptStat;
          out.nLeapfrog[k] = res.nLeapfrog;
          out.treeDepth[k] = res.treeDepth;
          out.divergent[k] = div ? 1 : 0;
          out.energy[k] = res.energy;
          out.lp[k] = this.logp;
        }
        this.iter++;
      }
      return done;
    }

    iteration() { return this.iter; }
    kept() { return this.nKept; }
    step() { return this.stepSize; }
    total() { return this.totalIter; }
    warmupDivergences() { return this.warmupDiv; }
    invMetric() { return Float64Array.from(this.inv); }
  }

  return {
    philox4x32, Rng, PURPOSE_TRANSITION, PURPOSE_STEP_SEARCH, nutsTransition, hmcTransition,
    Chain, newOutput,
  };
}

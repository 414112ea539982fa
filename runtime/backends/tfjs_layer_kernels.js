// The layers' kernels on TF.js: the `tfjs` backend's "layers.*" kernels, whose Python side
// (layer_kernels.py) reads this file and registers them.
//
// A plain script, not a module: it is evaluated as the body of `new Function("H", "tf", ...)`
// followed by `return makeLayerKernels(H, tf);`, once, after the tfjs backend's kernel host `H`
// (tfjs_host.js) exists. Tensors are host ids: looked up with H.get, results registered with
// H.adopt (which writes their shape into the shared scratch). Computed in float32: TF.js has no
// float64.
/* exported makeLayerKernels */

/**
 * @param {object} H the tfjs backend's kernel host (makeHost in tfjs_host.js)
 * @param {object} tf the TF.js namespace
 */
function makeLayerKernels(H, tf) {
  "use strict";
  const get = H.get, put = H.adopt;
  const sc = (v) => tf.scalar(v, "float32");
  const val = (id, v) => (id > 0 ? get(id) : sc(v));
  const stackPut = (f) => put(tf.tidy(() => tf.stack(f())));
  return {
    gather(t, i) { return put(tf.gather(get(t), get(i), 0)); },
    scatter(u, i, numRows) {
      const upd = get(u), idx = get(i);
      return put(tf.tidy(() => {
        const n = idx.size, tail = upd.shape.slice(idx.rank);
        if (n === 0) return tf.zeros([numRows, ...tail], upd.dtype);
        const rows = tf.reshape(upd, [n, ...tail]);
        return tf.scatterND(tf.reshape(idx, [n, 1]), rows, [numRows, ...tail]);
      }));
    },
    adam(p, g, m, v, aId, aVal, b1, b2, eps) {
      return stackPut(() => {
        const P = get(p), G = get(g), M = get(m), V = get(v);
        const m2 = tf.add(M, tf.mul(tf.sub(G, M), sc(1 - b1)));
        const v2 = tf.add(V, tf.mul(tf.sub(tf.mul(G, G), V), sc(1 - b2)));
        const step = tf.div(tf.mul(val(aId, aVal), m2), tf.add(tf.sqrt(v2), sc(eps)));
        return [tf.sub(P, step), m2, v2];
      });
    },
    sgd(p, g, vel, lrId, lrVal, mu, nesterov) {
      return stackPut(() => {
        const step = tf.mul(val(lrId, lrVal), get(g));
        const v2 = tf.sub(tf.mul(get(vel), sc(mu)), step);
        const P = get(p);
        return [nesterov ? tf.add(P, tf.sub(tf.mul(v2, sc(mu)), step)) : tf.add(P, v2), v2];
      });
    },
    rmsprop(p, g, sq, lrId, lrVal, rho, eps) {
      return stackPut(() => {
        const G = get(g);
        const s2 = tf.add(tf.mul(get(sq), sc(rho)), tf.mul(tf.mul(G, G), sc(1 - rho)));
        const step = tf.div(tf.mul(val(lrId, lrVal), G), tf.sqrt(tf.add(s2, sc(eps))));
        return [tf.sub(get(p), step), s2];
      });
    },
    labelRange(l) {  // [min, max] of the labels (empty: [0, 0])
      const x = get(l);
      if (x.size === 0) return [0, 0];
      return tf.tidy(() => [tf.min(x).dataSync()[0], tf.max(x).dataSync()[0]]);
    },
    sce(z, l, mean) {
      const Z = get(z), L = get(l), depth = Z.shape[Z.rank - 1];
      return put(tf.tidy(() => {
        const z2 = tf.reshape(Z, [-1, depth]), lab = tf.reshape(L, [-1]);
        if (lab.size === 0) return mean ? tf.scalar(0, Z.dtype) : tf.zeros(L.shape, Z.dtype);
        const picked = tf.sum(tf.mul(z2, tf.oneHot(tf.cast(lab, "int32"), depth)), 1);
        const loss = tf.sub(tf.logSumExp(z2, 1), picked);
        return mean ? tf.mean(loss) : tf.reshape(loss, L.shape);
      }));
    },
    sceGrad(z, l, g, mean) {
      const Z = get(z), L = get(l), G = get(g), depth = Z.shape[Z.rank - 1];
      return put(tf.tidy(() => {
        const z2 = tf.reshape(Z, [-1, depth]), n = z2.shape[0];
        const d = tf.sub(tf.softmax(z2), tf.oneHot(tf.cast(tf.reshape(L, [-1]), "int32"), depth));
        const scaled = mean ? tf.mul(d, tf.div(G, sc(Math.max(n, 1))))
          : tf.mul(d, tf.reshape(G, [-1, 1]));
        return tf.reshape(scaled, Z.shape);
      }));
    },
  };
}

"""The main job on the embedded NumPy backend: fit a logistic regression with tensorbridge's
autodiff, first by gradient descent (reverse mode), then polish it with Newton steps (Hessian by
forward-over-reverse), and check the gradient against finite differences.

Run with `make demo`.
"""

from __future__ import annotations

import time

import tensorbridge as tb


def main() -> None:
    t0 = time.perf_counter()
    gen = tb.random.Generator(42)
    n, d = 2000, 4
    true_w = tb.tensor([1.5, -2.0, 0.5, 0.0], dtype="float64")
    x = gen.normal((n, d), dtype="float64")
    p = tb.sigmoid(x @ true_w + 0.3)
    y = tb.cast(gen.uniform((n,), dtype="float64") < p, "float64")

    def nll(params):
        logits = x @ params["w"] + params["b"]
        # -log p(y | x) for Bernoulli(sigmoid(logits)), numerically stable
        return tb.mean(tb.softplus(logits) - y * logits)

    params = {"w": tb.zeros((d,), "float64"), "b": tb.tensor(0.0, dtype="float64")}
    step = tb.value_and_grad(nll)
    print("tensorbridge demo — logistic regression, N=2000, D=4, backend:", tb.get_backend())
    print(f"{'iter':>5} {'loss':>10} {'|grad|':>10}")
    for it in range(201):
        loss, g = step(params)
        if it % 50 == 0:
            gnorm = float(tb.sqrt(tb.sum(g["w"] ** 2) + g["b"] ** 2))
            print(f"{it:>5} {float(loss):>10.5f} {gnorm:>10.2e}")
        params = {k: params[k] - 1.0 * g[k] for k in params}

    # Newton polish: the Hessian of the packed parameter vector, forward over reverse
    def nll_vec(theta):
        return nll({"w": theta[:d], "b": theta[d]})

    theta = tb.concat([params["w"], tb.reshape(params["b"], (1,))])
    for _ in range(3):
        h = tb.hessian(nll_vec)(theta)
        g = tb.grad(nll_vec)(theta)
        theta = theta - tb.triangular_solve(
            tb.cholesky(h), tb.triangular_solve(tb.cholesky(h), g), transpose_a=True)
    final = float(nll_vec(theta))
    print(f"after 3 Newton steps: loss {final:.6f}, |grad| "
          f"{float(tb.sqrt(tb.sum(tb.grad(nll_vec)(theta) ** 2))):.1e}")
    print("fitted w:", [round(v, 3) for v in theta[:d].tolist()],
          " b:", round(theta[d].item(), 3))
    print("true   w:", true_w.tolist(), " b: 0.3")

    tb.check_grads(nll_vec, (theta,), order=2)
    print("gradients and Hessian-vector products agree with finite differences (order 2)")
    print(f"live tensors: {tb.memory()['num_tensors']}, done in {time.perf_counter() - t0:.2f}s")


if __name__ == "__main__":
    main()

/* Compiled sampling: NUTS (Stan's multinomial variant) and static HMC transitions, dual
 * averaging and windowed diagonal-metric adaptation, one chain at a time.
 *
 * This is a port of runtime/ppl/{nuts,hmc,hamiltonian,adaptation,chains,chain_rng}.py, chain by
 * chain: every floating-point operation is the one the NumPy code does, in the same order
 * (row sums use NumPy's pairwise summation), and the random numbers come from the same
 * per-chain Philox-4x32-10 streams, so a chain's trajectory is the Python sampler's to the last
 * bit (up to the order of the accept-statistic sum, which NumPy reduces per batch).
 *
 * Compile without floating-point contraction (-ffp-contract=off): a fused multiply-add rounds
 * differently from NumPy's separate multiply and add.
 */

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int (*tb_density_fn)(void *ctx, const double *q, double *logp, double *grad);

/* ------------------------------------------------------------------------------ Philox */

typedef struct {
    uint32_t key[2];
    uint32_t iteration, purpose; /* counter words 2 and 3 */
    uint64_t block;              /* counter words 0 and 1: the next block */
    double buf[2];               /* a block's two uniforms */
    int pos;                     /* next unread entry of buf (2: empty) */
} tb_rng;

enum { TB_PURPOSE_TRANSITION = 0, TB_PURPOSE_STEP_SEARCH = 1 };

void tb_philox4x32(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
    uint32_t k0 = key[0], k1 = key[1];
    for (int r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)0xD2511F53u * c0;
        uint64_t p1 = (uint64_t)0xCD9E8D57u * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
        uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c1 = (uint32_t)p1;
        c3 = (uint32_t)p0;
        c0 = n0;
        c2 = n2;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

void tb_rng_restart(tb_rng *r, uint32_t iteration, uint32_t purpose)
{
    r->iteration = iteration;
    r->purpose = purpose;
    r->block = 0;
    r->pos = 2;
}

void tb_rng_init(tb_rng *r, uint32_t key0, uint32_t key1)
{
    r->key[0] = key0;
    r->key[1] = key1;
    tb_rng_restart(r, 0, 0);
}

static double uniform53(uint32_t w0, uint32_t w1)
{
    return ((double)(w0 >> 5) * 67108864.0 + (double)(w1 >> 6)) * 0x1p-53;
}

/* The next uniform of the stream: chain_rng reads its stream as a plain sequence, two uniforms
 * per block, whatever the chunks it computes them in. */
double tb_rng_uniform(tb_rng *r)
{
    if (r->pos == 2) {
        uint32_t ctr[4] = {(uint32_t)r->block, (uint32_t)(r->block >> 32), r->iteration,
                           r->purpose};
        uint32_t w[4];
        tb_philox4x32(ctr, r->key, w);
        r->buf[0] = uniform53(w[0], w[1]);
        r->buf[1] = uniform53(w[2], w[3]);
        r->block++;
        r->pos = 0;
    }
    return r->buf[r->pos++];
}

/* m standard normals from 2 * ceil(m / 2) uniforms (Box-Muller, both outputs, in order). */
void tb_rng_normals(tb_rng *r, int m, double *out)
{
    const double two_pi = 2.0 * 3.141592653589793;
    for (int k = 0; k < m; k += 2) {
        double u1 = tb_rng_uniform(r), u2 = tb_rng_uniform(r);
        double rad = sqrt(-2.0 * log(1.0 - u1));
        double t = two_pi * u2;
        out[k] = rad * cos(t);
        if (k + 1 < m)
            out[k + 1] = rad * sin(t);
    }
}

/* ----------------------------------------------------------------------- NumPy arithmetic */

/* np.add.reduce over a contiguous row: identity 0, then NumPy's pairwise summation (8
 * accumulators per block of up to 128, halves above), so energies and U-turn products round
 * exactly as in the Python sampler. */
static double sum_np(const double *a, int n)
{
    if (n < 8) {
        double res = 0.0;
        for (int i = 0; i < n; i++)
            res += a[i];
        return res;
    }
    if (n <= 128) {
        double r[8];
        int i;
        for (int j = 0; j < 8; j++)
            r[j] = a[j];
        for (i = 8; i < n - (n % 8); i += 8)
            for (int j = 0; j < 8; j++)
                r[j] += a[i + j];
        double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++)
            res += a[i];
        return res;
    }
    int n2 = n / 2;
    n2 -= n2 % 8;
    return sum_np(a, n2) + sum_np(a + n2, n - n2);
}

static double dot_np(const double *a, const double *b, int n, double *tmp)
{
    for (int j = 0; j < n; j++)
        tmp[j] = a[j] * b[j];
    return 0.0 + sum_np(tmp, n);
}

/* np.logaddexp */
static double logaddexp(double x, double y)
{
    if (x == y)
        return x + 0.693147180559945309417232121458176568;
    double d = x - y;
    if (d > 0)
        return x + log1p(exp(-d));
    if (d <= 0)
        return y + log1p(exp(d));
    return d; /* NaN */
}

/* hamiltonian(): -logp + 0.5 * sum(p * p * inv); a NaN energy is infinitely bad */
static double hamiltonian(const double *p, double logp, const double *inv, int n, double *tmp)
{
    for (int j = 0; j < n; j++)
        tmp[j] = p[j] * p[j] * inv[j];
    double h = -logp + 0.5 * (0.0 + sum_np(tmp, n));
    return isnan(h) ? INFINITY : h;
}

/* The density; a failure (nonzero: returned as 1) is a point of log density -inf, i.e. a
 * divergence, where the trajectory ends. So is a log density of +inf (a singular point, never
 * a proposal to keep), as hamiltonian.guard_target makes it in the Python sampler. */
static int evaluate(tb_density_fn fn, void *ctx, const double *q, int n, double *logp,
                    double *grad)
{
    if (fn(ctx, q, logp, grad) != 0 || *logp == INFINITY) {
        *logp = -INFINITY;
        for (int j = 0; j < n; j++)
            grad[j] = NAN;
        return 1;
    }
    return 0;
}

/* hamiltonian.leapfrog with a signed step; 1 when the density failed */
static int leapfrog(double *q, double *p, double *logp, double *g, double e, const double *inv,
                    int n, tb_density_fn fn, void *ctx)
{
    double half = 0.5 * e;
    for (int j = 0; j < n; j++) {
        p[j] = p[j] + half * g[j];
        q[j] = q[j] + e * inv[j] * p[j];
    }
    int failed = evaluate(fn, ctx, q, n, logp, g);
    for (int j = 0; j < n; j++)
        p[j] = p[j] + half * g[j];
    return failed;
}

typedef struct {
    double accept_stat;
    int64_t n_leapfrog;
    int64_t tree_depth;
    int32_t divergent;
    double energy;
} tb_stats;

/* ---------------------------------------------------------------------------- workspace */

typedef struct {
    double *rho, *p_beg, *ps_beg, *p_end, *ps_end; /* beg/end: in integration order */
    double *prop_q, *prop_g;                       /* the subtree's multinomial proposal */
    double prop_logp, log_w;
    int valid;
} tb_tree;

enum { TREE_ARRAYS = 7 };

typedef struct {
    int n, max_depth;
    double *block; /* every array below */
    tb_tree *trees; /* [max_depth + 1]: the top-level subtree and one temporary per level */
    double *cur_q, *cur_p, *cur_g, cur_logp; /* the far end of the integration */
    double *e_inv;                           /* signed step times inverse metric */
    double *fwd[4], *bwd[4];                 /* tree ends: q, p, grad, M^-1 p */
    double *rho, *sample_q, *sample_g, *tmp, *tmp2, *tmp3, *q0, *p0, *g0;
    double *metro;            /* per-leaf acceptances, kept only to sum them pairwise */
    size_t metro_cap;
} tb_work;

static void work_free(tb_work *w)
{
    if (w != NULL) {
        free(w->block);
        free(w->trees);
        free(w->metro);
        free(w);
    }
}

static tb_work *work_new(int n, int max_depth)
{
    tb_work *w = calloc(1, sizeof(tb_work));
    if (w == NULL)
        return NULL;
    int n_trees = max_depth + 1;
    size_t per = (size_t)(n > 0 ? n : 1);
    size_t count = (size_t)n_trees * TREE_ARRAYS + 3 + 1 + 8 + 9;
    w->n = n;
    w->max_depth = max_depth;
    w->block = calloc(count * per, sizeof(double));
    w->trees = calloc((size_t)n_trees, sizeof(tb_tree));
    if (w->block == NULL || w->trees == NULL) {
        work_free(w);
        return NULL;
    }
    double *a = w->block;
#define TAKE(x) (x) = a, a += per
    for (int t = 0; t < n_trees; t++) {
        tb_tree *tr = &w->trees[t];
        TAKE(tr->rho);
        TAKE(tr->p_beg);
        TAKE(tr->ps_beg);
        TAKE(tr->p_end);
        TAKE(tr->ps_end);
        TAKE(tr->prop_q);
        TAKE(tr->prop_g);
    }
    TAKE(w->cur_q);
    TAKE(w->cur_p);
    TAKE(w->cur_g);
    TAKE(w->e_inv);
    for (int k = 0; k < 4; k++) {
        TAKE(w->fwd[k]);
        TAKE(w->bwd[k]);
    }
    TAKE(w->rho);
    TAKE(w->sample_q);
    TAKE(w->sample_g);
    TAKE(w->tmp);
    TAKE(w->tmp2);
    TAKE(w->tmp3);
    TAKE(w->q0);
    TAKE(w->p0);
    TAKE(w->g0);
#undef TAKE
    return w;
}

/* -------------------------------------------------------------------------------- NUTS */

typedef struct {
    tb_work *w;
    const double *inv;
    double half_e, h0, max_delta_h;
    tb_density_fn fn;
    void *ctx;
    tb_rng *rng;
    int pairwise_accept;
    int64_t n_leapfrog;
    double sum_metro;
    int divergent, failed; /* failed: out of memory */
} tb_builder;

static void swap(double **a, double **b)
{
    double *t = *a;
    *a = *b;
    *b = t;
}

/* One leapfrog step from the far end; nuts.py's _Builder._leaf. */
static void leaf(tb_builder *b, tb_tree *out)
{
    tb_work *w = b->w;
    int n = w->n;
    double half = b->half_e;
    for (int j = 0; j < n; j++) {
        w->cur_p[j] = w->cur_p[j] + half * w->cur_g[j];
        w->cur_q[j] = w->cur_q[j] + w->e_inv[j] * w->cur_p[j];
    }
    evaluate(b->fn, b->ctx, w->cur_q, n, &w->cur_logp, w->cur_g);
    for (int j = 0; j < n; j++) {
        double p = w->cur_p[j] + half * w->cur_g[j];
        w->cur_p[j] = p;
        out->rho[j] = out->p_beg[j] = out->p_end[j] = p;
        out->ps_beg[j] = out->ps_end[j] = b->inv[j] * p;
    }
    double kin = 0.5 * dot_np(w->cur_p, out->ps_end, n, w->tmp);
    double log_w = b->h0 - (kin - w->cur_logp);
    if (isnan(log_w))
        log_w = -INFINITY;
    memcpy(out->prop_q, w->cur_q, (size_t)n * sizeof(double));
    memcpy(out->prop_g, w->cur_g, (size_t)n * sizeof(double));
    out->prop_logp = w->cur_logp;
    out->log_w = log_w;
    out->valid = log_w >= -b->max_delta_h;
    double metro = exp(log_w < 0.0 ? log_w : 0.0);
    if (b->pairwise_accept) {
        if ((size_t)b->n_leapfrog == w->metro_cap) {
            size_t cap = w->metro_cap ? 2 * w->metro_cap : 64;
            double *grown = realloc(w->metro, cap * sizeof(double));
            if (grown == NULL)
                b->failed = 1;
            else {
                w->metro = grown;
                w->metro_cap = cap;
            }
        }
        if (!b->failed)
            w->metro[b->n_leapfrog] = metro;
    }
    b->n_leapfrog++;
    b->sum_metro += metro;
    if (-log_w > b->max_delta_h)
        b->divergent = 1;
}

/* Stan's generalised criterion over one span: both end velocities point along its momentum. */
static int spans_ok(const double *ps_a, const double *ps_b, const double *rho, int n,
                    double *tmp)
{
    return dot_np(ps_a, rho, n, tmp) > 0 && dot_np(ps_b, rho, n, tmp) > 0;
}

/* A subtree of 2^depth leaves into `out`; trees[depth] holds the second half. Uniforms are read
 * in post-order of the merges, as the rows 2 + k of the doubling's block in nuts.py. */
static void build(tb_builder *b, int depth, tb_tree *out)
{
    if (depth == 0) {
        leaf(b, out);
        return;
    }
    build(b, depth - 1, out);
    if (!out->valid)
        return; /* like Stan: the second half is not integrated, no row read */
    tb_work *w = b->w;
    int n = w->n;
    tb_tree *fin = &w->trees[depth];
    build(b, depth - 1, fin);
    double log_u = log(tb_rng_uniform(b->rng));
    double log_w = logaddexp(out->log_w, fin->log_w);
    if (log_u < fin->log_w - log_w) {
        swap(&out->prop_q, &fin->prop_q);
        swap(&out->prop_g, &fin->prop_g);
        out->prop_logp = fin->prop_logp;
    }
    out->log_w = log_w;
    if (!fin->valid) {
        out->valid = 0; /* the chain stops: nothing else of this tree is read */
        return;
    }
    double *rho = w->tmp2;
    for (int j = 0; j < n; j++)
        rho[j] = out->rho[j] + fin->rho[j];
    int persist;
    if (depth == 1) {
        /* two leaves: the three spans are the same span */
        persist = spans_ok(out->ps_beg, fin->ps_end, rho, n, w->tmp);
    } else {
        persist = spans_ok(out->ps_beg, fin->ps_end, rho, n, w->tmp);
        if (persist) {
            double *r = w->tmp3;
            for (int j = 0; j < n; j++)
                r[j] = out->rho[j] + fin->p_beg[j];
            persist = spans_ok(out->ps_beg, fin->ps_beg, r, n, w->tmp);
        }
        if (persist) {
            double *r = w->tmp3;
            for (int j = 0; j < n; j++)
                r[j] = fin->rho[j] + out->p_end[j];
            persist = spans_ok(out->ps_end, fin->ps_end, r, n, w->tmp);
        }
    }
    swap(&out->rho, &w->tmp2);
    swap(&out->p_end, &fin->p_end);
    swap(&out->ps_end, &fin->ps_end);
    out->valid = persist;
}

/* pairwise_accept: sum the leaves' acceptances pairwise, as NumPy reduces them for a batch of
 * one chain (several chains: in order) */
static int nuts_impl(tb_work *w, const double *q, double logp, const double *grad, double step,
                     const double *inv, tb_density_fn fn, void *ctx, tb_rng *rng, int max_depth,
                     double max_delta_h, int pairwise_accept, double *q_out, double *logp_out,
                     double *grad_out, tb_stats *stats)
{
    int n = w->n;
    size_t bytes = (size_t)n * sizeof(double);
    if (max_depth > w->max_depth)
        return -2;
    double *p0 = w->p0;
    tb_rng_normals(rng, n, p0);
    for (int j = 0; j < n; j++)
        p0[j] = p0[j] / sqrt(inv[j]);
    double h0 = hamiltonian(p0, logp, inv, n, w->tmp);
    tb_builder b = {w, inv, 0.0, h0, max_delta_h, fn, ctx, rng, pairwise_accept, 0, 0.0, 0, 0};

    memcpy(w->fwd[0], q, bytes);
    memcpy(w->fwd[1], p0, bytes);
    memcpy(w->fwd[2], grad, bytes);
    for (int j = 0; j < n; j++)
        w->fwd[3][j] = inv[j] * p0[j];
    for (int k = 0; k < 4; k++)
        memcpy(w->bwd[k], w->fwd[k], bytes);
    memcpy(w->rho, p0, bytes);
    memcpy(w->sample_q, q, bytes);
    memcpy(w->sample_g, grad, bytes);
    double sample_logp = logp, log_weight = 0.0;
    int depth = 0;
    tb_tree *sub = &w->trees[0];

    for (int d = 0; d < max_depth; d++) {
        int forward = tb_rng_uniform(rng) > 0.5;
        double log_u = log(tb_rng_uniform(rng));
        double **near = forward ? w->fwd : w->bwd, **far = forward ? w->bwd : w->fwd;
        memcpy(w->cur_q, near[0], bytes);
        memcpy(w->cur_p, near[1], bytes);
        memcpy(w->cur_g, near[2], bytes);
        double e = forward ? step : -step;
        b.half_e = forward ? 0.5 * step : -0.5 * step;
        for (int j = 0; j < n; j++)
            w->e_inv[j] = e * inv[j];
        build(&b, d, sub);
        if (!sub->valid)
            break;
        /* biased progressive sampling between the old tree and the new subtree */
        if (log_u < sub->log_w - log_weight) {
            swap(&w->sample_q, &sub->prop_q);
            swap(&w->sample_g, &sub->prop_g);
            sample_logp = sub->prop_logp;
        }
        log_weight = logaddexp(log_weight, sub->log_w);
        /* no-U-turn across the merged tree and across the seam, both ways */
        double *new_rho = w->tmp2, *r = w->tmp3;
        for (int j = 0; j < n; j++)
            new_rho[j] = w->rho[j] + sub->rho[j];
        int persist = spans_ok(far[3], sub->ps_end, new_rho, n, w->tmp);
        if (persist) {
            for (int j = 0; j < n; j++)
                r[j] = w->rho[j] + sub->p_beg[j];
            persist = spans_ok(far[3], sub->ps_beg, r, n, w->tmp);
        }
        if (persist) {
            for (int j = 0; j < n; j++)
                r[j] = sub->rho[j] + near[1][j];
            persist = spans_ok(near[3], sub->ps_end, r, n, w->tmp);
        }
        swap(&w->rho, &w->tmp2);
        swap(&near[0], &w->cur_q);
        swap(&near[1], &w->cur_p);
        swap(&near[2], &w->cur_g);
        swap(&near[3], &sub->ps_end);
        depth++;
        if (!persist)
            break;
    }
    if (b.failed)
        return -1;
    if (pairwise_accept)
        b.sum_metro = 0.0 + sum_np(w->metro, (int)b.n_leapfrog);
    memcpy(q_out, w->sample_q, bytes);
    memcpy(grad_out, w->sample_g, bytes);
    *logp_out = sample_logp;
    stats->n_leapfrog = b.n_leapfrog;
    stats->accept_stat = b.sum_metro / (double)(b.n_leapfrog > 1 ? b.n_leapfrog : 1);
    stats->tree_depth = depth;
    stats->divergent = b.divergent;
    stats->energy = h0;
    return 0;
}

/* --------------------------------------------------------------------------- static HMC */

static int hmc_impl(tb_work *w, const double *q, double logp, const double *grad, double step,
                    const double *inv, tb_density_fn fn, void *ctx, tb_rng *rng, int n_leapfrog,
                    int jitter, double max_delta_h, double *q_out, double *logp_out,
                    double *grad_out, tb_stats *stats)
{
    int n = w->n;
    size_t bytes = (size_t)n * sizeof(double);
    double *zq = w->cur_q, *zp = w->cur_p, *zg = w->cur_g, zlogp = logp;
    tb_rng_normals(rng, n, zp);
    for (int j = 0; j < n; j++)
        zp[j] = zp[j] / sqrt(inv[j]);
    double h0 = hamiltonian(zp, logp, inv, n, w->tmp);
    /* jitter the step +-10% (rng.uniform(0.9, 1.1)) against resonant periodic orbits */
    double eps = step * (jitter ? 0.9 + (1.1 - 0.9) * tb_rng_uniform(rng) : 1.0);
    memcpy(zq, q, bytes);
    memcpy(zg, grad, bytes);
    int divergent = 0, failed = 0;
    for (int s = 0; s < n_leapfrog && !failed; s++) {
        /* after a failure the energy stays infinite, as a NaN propagates in the Python
         * sampler: the rest of the trajectory is not integrated */
        failed = leapfrog(zq, zp, &zlogp, zg, eps, inv, n, fn, ctx);
        if (hamiltonian(zp, zlogp, inv, n, w->tmp) - h0 > max_delta_h)
            divergent = 1;
    }
    double h = failed ? INFINITY : hamiltonian(zp, zlogp, inv, n, w->tmp);
    double log_accept = h0 - h;
    if (!(log_accept < 0.0) && !isnan(log_accept))
        log_accept = 0.0; /* np.minimum keeps a NaN */
    int accept = log(tb_rng_uniform(rng)) < log_accept && !divergent;
    if (accept) {
        memcpy(q_out, zq, bytes);
        memcpy(grad_out, zg, bytes);
        *logp_out = zlogp;
    } else {
        if (q_out != q)
            memcpy(q_out, q, bytes);
        if (grad_out != grad)
            memcpy(grad_out, grad, bytes);
        *logp_out = logp;
    }
    stats->accept_stat = exp(log_accept);
    stats->n_leapfrog = n_leapfrog;
    stats->tree_depth = 0;
    stats->divergent = divergent;
    stats->energy = h0;
    return 0;
}

/* Single transitions with explicit inputs (for step-for-step tests); q_out may alias q. */
int tb_nuts_transition(int n, const double *q, double logp, const double *grad, double step,
                       const double *inv_metric, tb_density_fn fn, void *ctx, tb_rng *rng,
                       int max_depth, double max_delta_h, int pairwise_accept, double *q_out,
                       double *logp_out, double *grad_out, tb_stats *stats)
{
    tb_work *w = work_new(n, max_depth);
    if (w == NULL)
        return -1;
    int rc = nuts_impl(w, q, logp, grad, step, inv_metric, fn, ctx, rng, max_depth, max_delta_h,
                       pairwise_accept, q_out, logp_out, grad_out, stats);
    work_free(w);
    return rc;
}

int tb_hmc_transition(int n, const double *q, double logp, const double *grad, double step,
                      const double *inv_metric, tb_density_fn fn, void *ctx, tb_rng *rng,
                      int n_leapfrog, int jitter, double max_delta_h, double *q_out,
                      double *logp_out, double *grad_out, tb_stats *stats)
{
    tb_work *w = work_new(n, 0);
    if (w == NULL)
        return -1;
    int rc = hmc_impl(w, q, logp, grad, step, inv_metric, fn, ctx, rng, n_leapfrog, jitter,
                      max_delta_h, q_out, logp_out, grad_out, stats);
    work_free(w);
    return rc;
}

/* ---------------------------------------------------------------------------- adaptation */

/* Stan's heuristic (adaptation.find_reasonable_step) for one chain: double or halve the step
 * until one leapfrog step's acceptance crosses 0.8. */
static double find_reasonable_step(tb_work *w, const double *q, double logp, const double *grad,
                                   double step, const double *inv, tb_density_fn fn, void *ctx,
                                   tb_rng *rng)
{
    int n = w->n;
    size_t bytes = (size_t)n * sizeof(double);
    const double log08 = log(0.8);
    double direction = 0.0;
    for (int round = -1; round < 100; round++) {
        double *zq = w->cur_q, *zp = w->cur_p, *zg = w->cur_g, zlogp = logp;
        tb_rng_normals(rng, n, zp);
        for (int j = 0; j < n; j++)
            zp[j] = zp[j] / sqrt(inv[j]);
        double h0 = hamiltonian(zp, logp, inv, n, w->tmp);
        memcpy(zq, q, bytes);
        memcpy(zg, grad, bytes);
        leapfrog(zq, zp, &zlogp, zg, step, inv, n, fn, ctx);
        double dh = h0 - hamiltonian(zp, zlogp, inv, n, w->tmp);
        if (round < 0) {
            direction = dh > log08 ? 1.0 : -1.0;
            continue;
        }
        if (direction > 0 ? !(dh > log08) : !(dh < log08))
            break;
        step = direction > 0 ? step * 2.0 : step * 0.5;
        step = step < 1e-10 ? 1e-10 : (step > 1e7 ? 1e7 : step);
    }
    return step;
}

typedef struct {
    double delta, gamma, t0, kappa, mu, s_bar, x_bar;
    int64_t counter;
} tb_dual;

static void dual_restart(tb_dual *d, double step)
{
    d->mu = log(10.0 * step);
    d->s_bar = 0.0;
    d->x_bar = 0.0;
    d->counter = 0;
}

static double dual_update(tb_dual *d, double accept_stat)
{
    d->counter++;
    double a = isnan(accept_stat) ? 0.0 : accept_stat;
    a = a < 1.0 ? a : 1.0;
    double eta = 1.0 / ((double)d->counter + d->t0);
    d->s_bar = (1 - eta) * d->s_bar + eta * (d->delta - a);
    double x = d->mu - d->s_bar * sqrt((double)d->counter) / d->gamma;
    double x_eta = pow((double)d->counter, -d->kappa);
    d->x_bar = x_eta * x + (1 - x_eta) * d->x_bar;
    return exp(x);
}

typedef struct {
    int num_warmup, enabled, init_buffer, term_buffer, window_size, next_window_end;
} tb_windows;

static void windows_init(tb_windows *s, int num_warmup)
{
    int init_buffer = 75, term_buffer = 50, base_window = 25;
    s->num_warmup = num_warmup;
    s->enabled = num_warmup >= 20;
    if (init_buffer + base_window + term_buffer > num_warmup) {
        init_buffer = (int)(0.15 * num_warmup);
        term_buffer = (int)(0.1 * num_warmup);
        base_window = num_warmup - (init_buffer + term_buffer);
    }
    s->init_buffer = init_buffer;
    s->term_buffer = term_buffer;
    s->window_size = base_window;
    s->next_window_end = init_buffer + base_window - 1;
}

static int windows_in(const tb_windows *s, int i)
{
    return s->enabled && s->init_buffer <= i && i < s->num_warmup - s->term_buffer;
}

static int windows_end(tb_windows *s, int i)
{
    if (!s->enabled || i != s->next_window_end || i == s->num_warmup)
        return 0;
    int last = s->num_warmup - s->term_buffer - 1;
    if (s->next_window_end != last) {
        s->window_size *= 2;
        s->next_window_end = i + s->window_size;
        if (s->next_window_end != last && s->next_window_end + 2 * s->window_size > last)
            s->next_window_end = last;
    }
    return 1;
}

/* --------------------------------------------------------------------------------- chain */

typedef struct {
    int n;
    int kind; /* 0: NUTS, 1: static HMC */
    int max_depth, n_leapfrog, jitter, adapt_step, pairwise_accept;
    double target_accept, step_size, max_delta_h;
    int warmup, n_samples, thin;
    uint32_t key0, key1; /* chain_rng.chain_key(seed, chain) */
} tb_chain_config;

typedef struct {
    double *draws;          /* [n_samples, n]: kept free states */
    double *accept_stat;    /* [n_samples] each */
    int64_t *n_leapfrog;
    int64_t *tree_depth;
    uint8_t *divergent;
    double *energy;
    double *lp;
    uint8_t *iter_divergent; /* [warmup + n_samples * thin]: every iteration, for progress */
} tb_chain_out;

typedef struct {
    tb_chain_config cfg;
    tb_density_fn fn;
    void *ctx;
    tb_work *work;
    tb_rng rng;
    double *q, *grad, *inv, *mean, *m2;
    double logp, step;
    tb_dual dual;
    tb_windows windows;
    int64_t welford_n;
    int started, iteration, kept, total;
    int64_t warmup_divergences, divergences;
} tb_chain;

void tb_chain_free(tb_chain *c)
{
    if (c != NULL) {
        work_free(c->work);
        free(c->q);
        free(c);
    }
}

tb_chain *tb_chain_new(const tb_chain_config *cfg, const double *q0, tb_density_fn fn,
                       void *ctx)
{
    if (cfg->n < 0 || cfg->thin < 1 || cfg->warmup < 0 || cfg->n_samples < 0)
        return NULL;
    tb_chain *c = calloc(1, sizeof(tb_chain));
    if (c == NULL)
        return NULL;
    int n = cfg->n;
    size_t per = (size_t)(n > 0 ? n : 1);
    c->cfg = *cfg;
    c->fn = fn;
    c->ctx = ctx;
    c->work = work_new(n, cfg->kind == 0 ? cfg->max_depth : 0);
    c->q = calloc(5 * per, sizeof(double));
    if (c->work == NULL || c->q == NULL) {
        tb_chain_free(c);
        return NULL;
    }
    c->grad = c->q + per;
    c->inv = c->q + 2 * per;
    c->mean = c->q + 3 * per;
    c->m2 = c->q + 4 * per;
    memcpy(c->q, q0, (size_t)n * sizeof(double));
    for (int j = 0; j < n; j++)
        c->inv[j] = 1.0;
    c->step = cfg->step_size;
    tb_rng_init(&c->rng, cfg->key0, cfg->key1);
    c->dual.delta = cfg->target_accept;
    c->dual.gamma = 0.05;
    c->dual.t0 = 10.0;
    c->dual.kappa = 0.75;
    windows_init(&c->windows, cfg->warmup);
    c->total = cfg->warmup + cfg->n_samples * cfg->thin;
    return c;
}

static void welford_reset(tb_chain *c)
{
    c->welford_n = 0;
    memset(c->mean, 0, (size_t)c->cfg.n * sizeof(double));
    memset(c->m2, 0, (size_t)c->cfg.n * sizeof(double));
}

/* Advance up to n_iter iterations of warmup and sampling exactly as chains.run_chains does for
 * this chain; returns the number run (0 once every iteration is done), or < 0 on an error. */
int tb_chain_run(tb_chain *c, int n_iter, const tb_chain_out *out)
{
    const tb_chain_config *cfg = &c->cfg;
    int n = cfg->n;
    size_t bytes = (size_t)n * sizeof(double);
    if (!c->started) {
        evaluate(c->fn, c->ctx, c->q, n, &c->logp, c->grad);
        if (cfg->adapt_step) {
            tb_rng_restart(&c->rng, 0, TB_PURPOSE_STEP_SEARCH);
            c->step = find_reasonable_step(c->work, c->q, c->logp, c->grad, c->step, c->inv,
                                           c->fn, c->ctx, &c->rng);
        }
        dual_restart(&c->dual, c->step);
        c->started = 1;
    }
    int done = 0;
    for (; done < n_iter && c->iteration < c->total; done++) {
        int i = c->iteration;
        tb_stats st;
        int rc;
        /* each chain's numbers depend on (seed, chain, i) only */
        tb_rng_restart(&c->rng, (uint32_t)i, TB_PURPOSE_TRANSITION);
        if (cfg->kind == 0)
            rc = nuts_impl(c->work, c->q, c->logp, c->grad, c->step, c->inv, c->fn, c->ctx,
                           &c->rng, cfg->max_depth, cfg->max_delta_h, cfg->pairwise_accept,
                           c->q, &c->logp, c->grad, &st);
        else
            rc = hmc_impl(c->work, c->q, c->logp, c->grad, c->step, c->inv, c->fn, c->ctx,
                          &c->rng, cfg->n_leapfrog, cfg->jitter, cfg->max_delta_h, c->q,
                          &c->logp, c->grad, &st);
        if (rc != 0)
            return rc;
        c->divergences += st.divergent != 0;
        if (out->iter_divergent != NULL)
            out->iter_divergent[i] = st.divergent != 0;
        if (i < cfg->warmup) {
            c->warmup_divergences += st.divergent != 0;
            if (cfg->adapt_step)
                c->step = dual_update(&c->dual, st.accept_stat);
            if (windows_in(&c->windows, i)) {
                /* Welford.add */
                c->welford_n++;
                for (int j = 0; j < n; j++) {
                    double delta = c->q[j] - c->mean[j];
                    c->mean[j] += delta / (double)c->welford_n;
                    c->m2[j] += delta * (c->q[j] - c->mean[j]);
                }
            }
            if (windows_end(&c->windows, i)) {
                /* regularised_variance: shrink towards 1e-3 */
                double wn = (double)c->welford_n;
                double denom = (double)(c->welford_n - 1 > 1 ? c->welford_n - 1 : 1);
                for (int j = 0; j < n; j++)
                    c->inv[j] = (wn / (wn + 5.0)) * (c->m2[j] / denom) + 1e-3 * (5.0 / (wn + 5.0));
                welford_reset(c);
                if (cfg->adapt_step) {
                    tb_rng_restart(&c->rng, (uint32_t)(i + 1), TB_PURPOSE_STEP_SEARCH);
                    c->step = find_reasonable_step(c->work, c->q, c->logp, c->grad, c->step,
                                                   c->inv, c->fn, c->ctx, &c->rng);
                    dual_restart(&c->dual, c->step);
                }
            }
            if (i == cfg->warmup - 1 && cfg->adapt_step)
                c->step = exp(c->dual.x_bar);
        } else if ((i - cfg->warmup) % cfg->thin == 0) {
            int k = c->kept++;
            memcpy(out->draws + (size_t)k * (size_t)n, c->q, bytes);
            out->accept_stat[k] = st.accept_stat;
            out->n_leapfrog[k] = st.n_leapfrog;
            out->tree_depth[k] = st.tree_depth;
            out->divergent[k] = st.divergent != 0;
            out->energy[k] = st.energy;
            out->lp[k] = c->logp;
        }
        c->iteration++;
    }
    return done;
}

int tb_chain_iteration(const tb_chain *c) { return c->iteration; }
int tb_chain_kept(const tb_chain *c) { return c->kept; }
double tb_chain_step(const tb_chain *c) { return c->step; }
int64_t tb_chain_warmup_divergences(const tb_chain *c) { return c->warmup_divergences; }

void tb_chain_inv_metric(const tb_chain *c, double *out)
{
    memcpy(out, c->inv, (size_t)c->cfg.n * sizeof(double));
}

// Eight schools (non-centred), written with tb.ppl: the model every front door runs in
// `make demo`. Shared by examples/eight_schools.mjs (Node) and demo/eight_schools.html (browser).
export const Y = [28, 8, -3, 7, -1, 1, 18, 12];
export const SIGMA = [15, 10, 16, 11, 9, 11, 10, 18];

/** The model: mu ~ N(0, 5), tau ~ half-Cauchy(0, 5), eta ~ N(0, 1) x 8, theta = mu + tau eta,
 * y ~ N(theta, sigma). */
export async function eightSchools(tb) {
  const g = tb.ppl;
  const y = await g.asData(Y);
  const sigma = await g.asData(SIGMA);
  const mu = await g.normal(0, 5);
  const tau = await g.cauchy(0, 5, { truncation: [0, Infinity] });
  const eta = await g.normal(0, 1, { dim: 8 });
  const theta = await tb.add(mu, await tb.mul(tau, eta));
  await g.distribution(y, await g.normal(theta, sigma));
  return g.model({ mu, tau, eta, theta });
}

/** Sample and summarise: the JSON every front door writes (examples/showcase.py reads it);
 * parameter names are 1-based here (theta[1]..theta[8], "index_base": 1). */
export async function run(tb, { chains = 4, warmup = 1000, samples = 1000, seed = 42,
  onProgress, language = "JavaScript" } = {}) {
  const m = await eightSchools(tb);
  const t0 = performance.now();
  const draws = await tb.mcmc(m, { nSamples: samples, warmup, chains, seed, onProgress,
    callbackEvery: 25 });
  const seconds = (performance.now() - t0) / 1000;
  const posterior = {};
  for (const row of draws.summary()) {
    const m1 = /^(\w+)\[(\d+)\]$/.exec(row.variable);
    if ((m1 ? m1[1] : row.variable) === "eta") continue;
    const name = m1 ? `${m1[1]}[${Number(m1[2]) + 1}]` : row.variable;
    posterior[name] = { mean: row.mean, sd: row.sd, q5: row.q5, q95: row.q95, rhat: row.rhat,
      ess_bulk: row.essBulk };
  }
  return { language, seconds, chains, draws: draws.nDraws, warmup,
    divergences: draws.divergences, index_base: 1, posterior };
}

/** The summary as a text table. */
export function table(result) {
  const lines = [`${"parameter".padEnd(10)}${["mean", "sd", "q5", "q95", "rhat", "ess_bulk"]
    .map((c) => c.padStart(10)).join("")}`];
  for (const [name, r] of Object.entries(result.posterior)) {
    lines.push(name.padEnd(10) + [r.mean, r.sd, r.q5, r.q95].map((v) => v.toFixed(2)
      .padStart(10)).join("") + r.rhat.toFixed(3).padStart(10)
      + r.ess_bulk.toFixed(0).padStart(10));
  }
  lines.push(`${result.chains} chains x ${result.draws} draws (${result.warmup} warmup); `
    + `${result.divergences} divergent transitions; ${result.seconds.toFixed(1)} s`);
  return lines.join("\n");
}

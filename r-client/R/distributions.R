# greta's distributions: each makes a variable with that prior, or (with `distribution<-`) the
# likelihood of data.

# Build the distribution `name` (a function of tensorbridge) from R arguments. The runtime's
# spec checks them (bridge/r/ppl.py make_distribution) and names a wrong one as R spells it.
new_distribution <- function(name, params, dim = NULL, truncation = NULL, ...) {
  options <- c(list(dim = dim, truncation = truncation), list(...)) # NULL: not given
  new_lazy(ppl("make_distribution")(name, params, options))
}

#' Probability distributions
#'
#' These functions make lazy arrays that follow a distribution. Used directly, the result is a
#' variable with that prior (`mu <- normal(0, 10)`); assigned to data with
#' [`distribution<-`][distribution], it is the data's likelihood
#' (`distribution(y) <- normal(mu, sd)`). Argument names and parameterisations follow greta
#' (and R's `d*` functions): `normal(mean, sd)`, `lognormal(meanlog, sdlog)`,
#' `student(df, mu, sigma)`, `gamma(shape, rate)`, `inverse_gamma(alpha, beta)`,
#' `weibull(shape, scale)`, `pareto(a, b)` (support `x >= b`), `beta(shape1, shape2)`,
#' `negative_binomial(size, prob)` (failures before the `size`-th success), and so on.
#'
#' Parameters are numbers, R vectors, matrices or arrays, or lazy arrays; R vectors are column
#' vectors, except for the multivariate distributions, whose parameters have the event along
#' the last dimension (a vector is one row: `dirichlet(c(1, 1, 1))` is 1 x 3). Parameters that
#' are known when the distribution is made are checked there (`normal(0, -1)` is an error
#' naming `sd`).
#'
#' `dim` sets the dimensions of the variable (a number `n` means n x 1), broadcasting the
#' parameters. The continuous univariate distributions take `truncation = c(lower, upper)`,
#' which renormalises the density and, for a prior, makes that interval the support
#' (`cauchy(0, 5, truncation = c(0, Inf))` is a half-Cauchy).
#'
#' The discrete distributions (`bernoulli`, `binomial`, `beta_binomial`, `poisson`,
#' `negative_binomial`, `hypergeometric`, `categorical`, `multinomial`,
#' `dirichlet_multinomial`) can only be assigned to data. `wishart(df, Sigma)` is over
#' symmetric positive definite matrices (`df` greater than the dimension less one).
#' `categorical` values are one-hot rows, as in greta. The multivariate distributions take
#' `n_realisations` (rows of independent draws) and `dimension` (the event size, when the
#' parameters do not fix it).
#'
#' @param mean,sd,meanlog,sdlog,df,mu,sigma,location,scale,rate,shape,alpha,beta,a,b
#'   Parameters (see Details), as in greta.
#' @param shape1,shape2,min,max,prob,size,lambda,eta,Sigma Parameters (see Details).
#' @param df1,df2,m,n,k Parameters of `f(df1, df2)` (Fisher's F) and
#'   `hypergeometric(m, n, k)` (white balls among `k` drawn from `m` white and `n` black, as
#'   in `dhyper`).
#' @param cholesky `multivariate_normal()` takes the lower Cholesky factor of the covariance
#'   instead of `Sigma` (give exactly one).
#' @param link Given (or given instead of the parameters), `binomial()` and `poisson()` are
#'   stats' family functions: `glm(y ~ x, family = binomial)`, `binomial("probit")` and
#'   `poisson(link = "sqrt")` work as with stats alone.
#' @param x `gamma(x = )`, or `gamma()` with one argument (`gamma(5)`), is base R's gamma
#'   function; likewise `beta(a = , b = )` is base R's beta function (`beta(2, 3)`, with
#'   positional arguments, is greta's distribution).
#' @param dim Dimensions of the variable: `NULL` (from the parameters), `n` or a vector.
#' @param truncation `NULL` or `c(lower, upper)`.
#' @param n_realisations,dimension For multivariate distributions (see Details).
#' @return A lazy array: a variable with that distribution.
#' @examples
#' \dontrun{
#' mu <- normal(0, 5)
#' tau <- cauchy(0, 5, truncation = c(0, Inf))
#' eta <- normal(0, 1, dim = 8)
#' p <- beta(1, 1)
#' y <- as_data(c(0, 1, 1, 0, 1))
#' distribution(y) <- bernoulli(p)
#' }
#' @name distributions
NULL

#' @rdname distributions
#' @export
normal <- function(mean, sd, dim = NULL, truncation = NULL) {
  new_distribution("normal", list(mean = mean, sd = sd), dim, truncation)
}

#' @rdname distributions
#' @export
lognormal <- function(meanlog, sdlog, dim = NULL, truncation = NULL) {
  new_distribution("lognormal", list(meanlog = meanlog, sdlog = sdlog), dim, truncation)
}

#' @rdname distributions
#' @export
student <- function(df, mu, sigma, dim = NULL, truncation = NULL) {
  new_distribution("student", list(df = df, mu = mu, sigma = sigma), dim, truncation)
}

#' @rdname distributions
#' @export
cauchy <- function(location, scale, dim = NULL, truncation = NULL) {
  new_distribution("cauchy", list(location = location, scale = scale), dim, truncation)
}

#' @rdname distributions
#' @export
logistic <- function(location, scale, dim = NULL, truncation = NULL) {
  new_distribution("logistic", list(location = location, scale = scale), dim, truncation)
}

#' @rdname distributions
#' @export
laplace <- function(mu, sigma, dim = NULL, truncation = NULL) {
  new_distribution("laplace", list(mu = mu, sigma = sigma), dim, truncation)
}

#' @rdname distributions
#' @export
uniform <- function(min, max, dim = NULL) {
  new_distribution("uniform", list(min = min, max = max), dim)
}

#' @rdname distributions
#' @export
exponential <- function(rate, dim = NULL, truncation = NULL) {
  new_distribution("exponential", list(rate = rate), dim, truncation)
}

#' @rdname distributions
#' @export
gamma <- function(shape, rate, dim = NULL, truncation = NULL, x) {
  if (!missing(x)) return(base::gamma(x))
  if (missing(rate) && !missing(shape) && is.null(dim) && is.null(truncation)) {
    return(base::gamma(shape)) # gamma(5): base R's gamma function
  }
  new_distribution("gamma", list(shape = shape, rate = rate), dim, truncation)
}

#' @rdname distributions
#' @export
inverse_gamma <- function(alpha, beta, dim = NULL, truncation = NULL) {
  new_distribution("inverse_gamma", list(alpha = alpha, beta = beta), dim, truncation)
}

#' @rdname distributions
#' @export
weibull <- function(shape, scale, dim = NULL, truncation = NULL) {
  new_distribution("weibull", list(shape = shape, scale = scale), dim, truncation)
}

#' @rdname distributions
#' @export
pareto <- function(a, b, dim = NULL, truncation = NULL) {
  new_distribution("pareto", list(a = a, b = b), dim, truncation)
}

#' @rdname distributions
#' @export
beta <- function(shape1, shape2, dim = NULL, truncation = NULL, a, b) {
  if (!missing(a) || !missing(b)) return(base::beta(a, b)) # base R's beta(a = , b = )
  if (missing(shape2) && !missing(shape1) && is.null(dim) && is.null(truncation)) {
    stop("beta: shape2 is missing; for base R's beta function write beta(a = , b = ) or ",
         "base::beta()", call. = FALSE)
  }
  new_distribution("beta", list(shape1 = shape1, shape2 = shape2), dim, truncation)
}

#' @rdname distributions
#' @export
chi_squared <- function(df, dim = NULL, truncation = NULL) {
  new_distribution("chi_squared", list(df = df), dim, truncation)
}

#' @rdname distributions
#' @export
bernoulli <- function(prob, dim = NULL) {
  new_distribution("bernoulli", list(prob = prob), dim)
}

#' @rdname distributions
#' @export
binomial <- function(size, prob, dim = NULL, link) {
  family <- stats_family_link(if (missing(size)) NULL else substitute(size), missing(size),
                              missing(prob), if (missing(link)) NULL else substitute(link),
                              parent.frame(), "logit")
  if (!is.null(family)) return(do.call(stats::binomial, list(link = family)))
  new_distribution("binomial", list(size = size, prob = prob), dim)
}

#' @rdname distributions
#' @export
beta_binomial <- function(size, alpha, beta, dim = NULL) {
  new_distribution("beta_binomial", list(size = size, alpha = alpha, beta = beta), dim)
}

#' @rdname distributions
#' @export
poisson <- function(lambda, dim = NULL, link) {
  family <- stats_family_link(if (missing(lambda)) NULL else substitute(lambda),
                              missing(lambda), missing(dim) || is.null(dim),
                              if (missing(link)) NULL else substitute(link), parent.frame(),
                              "log")
  if (!is.null(family)) return(do.call(stats::poisson, list(link = family)))
  new_distribution("poisson", list(lambda_ = lambda), dim)
}

GLM_LINKS <- c("logit", "probit", "cloglog", "cauchit", "log", "identity", "sqrt",
               "inverse", "1/mu^2")

# When a call of binomial()/poisson() is clearly stats' family function (as greta detects:
# `glm(family = binomial)` calls it with no arguments; `binomial("probit")`,
# `binomial(link = "probit")`, `binomial(probit)` name a link), the link to pass to stats'
# function (a name or a link-glm object); otherwise NULL. `first` is the unevaluated first
# argument, `only` whether the distribution's other parameters are missing, `default` the
# family's default link.
stats_family_link <- function(first, first_missing, only, link, env, default) {
  link_of <- function(expr) {
    if (is.name(expr) && as.character(expr) %in% GLM_LINKS) return(as.character(expr))
    value <- tryCatch(eval(expr, env), error = function(e) NULL)
    if (is.character(value) && length(value) == 1L && value %in% GLM_LINKS) return(value)
    if (inherits(value, "link-glm")) return(value)
    NULL
  }
  if (!is.null(link)) {
    l <- link_of(link)
    if (is.null(l)) {
      stop("link: not a link of stats' glm families (", paste(GLM_LINKS, collapse = ", "), ")",
           call. = FALSE)
    }
    return(l)
  }
  if (!only) return(NULL)
  if (first_missing) return(default)
  link_of(first)
}

#' @rdname distributions
#' @export
negative_binomial <- function(size, prob, dim = NULL) {
  new_distribution("negative_binomial", list(size = size, prob = prob), dim)
}

#' @rdname distributions
#' @export
categorical <- function(prob, n_realisations = NULL, dimension = NULL) {
  new_distribution("categorical", list(prob = prob),
                   n_realisations = n_realisations, dimension = dimension)
}

#' @rdname distributions
#' @export
multinomial <- function(size, prob, n_realisations = NULL, dimension = NULL) {
  new_distribution("multinomial", list(size = size, prob = prob),
                   n_realisations = n_realisations, dimension = dimension)
}

#' @rdname distributions
#' @export
dirichlet <- function(alpha, n_realisations = NULL, dimension = NULL) {
  new_distribution("dirichlet", list(alpha = alpha),
                   n_realisations = n_realisations, dimension = dimension)
}

#' @rdname distributions
#' @export
multivariate_normal <- function(mean, Sigma = NULL, n_realisations = NULL, dimension = NULL,
                                cholesky = NULL) {
  # exactly one of Sigma and its lower Cholesky factor (the runtime says which is missing)
  params <- list(mean = mean, Sigma = Sigma, cholesky = cholesky)
  new_distribution("multivariate_normal", params[!vapply(params, is.null, logical(1))],
                   n_realisations = n_realisations, dimension = dimension)
}

#' @rdname distributions
#' @export
lkj_correlation <- function(eta, dimension = 2) {
  new_distribution("lkj_correlation", list(eta = eta), dimension = dimension)
}

#' @rdname distributions
#' @export
f <- function(df1, df2, dim = NULL, truncation = NULL) {
  new_distribution("f", list(df1 = df1, df2 = df2), dim, truncation)
}

#' @rdname distributions
#' @export
hypergeometric <- function(m, n, k, dim = NULL) {
  new_distribution("hypergeometric", list(m = m, n = n, k = k), dim)
}

#' @rdname distributions
#' @export
dirichlet_multinomial <- function(size, alpha, n_realisations = NULL, dimension = NULL) {
  new_distribution("dirichlet_multinomial", list(size = size, alpha = alpha),
                   n_realisations = n_realisations, dimension = dimension)
}

#' @rdname distributions
#' @export
wishart <- function(df, Sigma, dimension = NULL) {
  new_distribution("wishart", list(df = df, Sigma = Sigma), dimension = dimension)
}

# `dim` as the runtime's spec checks it: whole numbers as integers (R's 3 is a double), other
# values as given, for the spec to refuse by name
ppl_whole_dim <- function(dim) {
  if (is.numeric(dim) && length(dim) && all(is.finite(dim) & dim == round(dim))) {
    dim <- as.integer(dim)
  }
  if (length(dim) > 1) as.list(dim) else dim
}

#' Mixtures and joint distributions
#'
#' As in greta: `mixture(...)` combines distributions into one whose density is the weighted
#' sum of theirs, the `weights` (positive, need not sum to one) having one entry per
#' distribution along their first dimension (the others 1 or the distributions'); `joint(...)`
#' puts independent univariate distributions side by side, one column each. Both make a
#' variable, or (with [`distribution<-`][distribution]) the likelihood of data. The
#' distributions must be all continuous or all discrete and have the same dimensions; as a
#' prior, a mixture's distributions must have the same support (a joint's may differ: each
#' column keeps its own bounds, as in `joint(normal(0, 1), beta(2, 2))`).
#'
#' @param ... Distributions (from [normal()] and the others), not used elsewhere.
#' @param weights The mixture weights: a vector, matrix or array, or a lazy array.
#' @param dim Dimensions of the result: for `mixture()`, `NULL` (the distributions') or a
#'   number `n` (n x 1) or a vector; for `joint()`, the dimensions before the last, which has
#'   one entry per distribution (`NULL`: one row).
#' @return A lazy array: a variable with that distribution.
#' @examples
#' \dontrun{
#' a <- mixture(normal(-3, 0.5), normal(3, 0.5), weights = c(0.3, 0.7))
#' x <- joint(normal(-3, 0.5), normal(3, 0.5))
#' y <- as_data(cbind(rnorm(10, 2, 0.5), rnorm(10, -1, 0.3)))
#' distribution(y) <- joint(normal(variable(), 0.5), normal(variable(), 0.3), dim = 10)
#' }
#' @export
mixture <- function(..., weights, dim = NULL) {
  if (missing(weights)) stop("mixture: weights is missing (one per distribution)", call. = FALSE)
  if (!is_lazy(weights) && is.numeric(weights) && is.null(dim(weights))) {
    weights <- matrix(weights, ncol = 1) # greta's weights are a column
  }
  if (!is.null(dim)) {
    dim <- ppl_whole_dim(dim)
    if (is.integer(dim) && length(dim) == 1) dim <- list(dim, 1L) # n is n x 1, as greta has it
  }
  new_lazy(do.call(ppl("op"), c(list("mixture"), list(...),
                                list(weights = weights, dim = dim))))
}

#' @rdname mixture
#' @export
joint <- function(..., dim = NULL) {
  dim <- if (is.null(dim)) 1L else ppl_whole_dim(dim)
  new_lazy(do.call(ppl("op"), c(list("joint"), list(...), list(dim = dim))))
}

#' Assign a distribution to data
#'
#' `distribution(y) <- dist` makes `dist` (from [normal()] and the other distributions) the
#' likelihood of the data array `y` (from [as_data()], or an operation on data only), as in
#' greta. The parameters of `dist` must have `y`'s dimensions or broadcast to them. A variable
#' gets its prior by being made from a distribution (`mu <- normal(0, 10)`), not by assignment.
#' `distribution(y)` returns `y` if it has a distribution, else `NULL`.
#'
#' @param greta_array A lazy array of data (an R numeric value is wrapped with [as_data()]).
#' @param value A distribution.
#' @return `distribution<-`: `greta_array` unchanged (R data stays R data, as in greta; the
#'   likelihood is held by the model's graph).
#' @rdname distribution
#' @examples
#' \dontrun{
#' y <- as_data(c(1.2, 0.4, 2.2))
#' distribution(y) <- normal(variable(), 1)
#' y
#' }
#' @export
`distribution<-` <- function(greta_array, value) {
  if (!is_lazy(value)) {
    stop(sprintf(paste0(
      "distribution<-: value must be a distribution such as normal(mu, sd), not %s"
    ), ppl_describe(value)), call. = FALSE)
  }
  original <- greta_array # what the caller's variable keeps (greta leaves R data as it was)
  if (!is_lazy(greta_array)) {
    ppl_array_arg(greta_array, "greta_array", "distribution<-")
    greta_array <- as_data(greta_array)
  }
  kind <- .subset2(greta_array, "kind")
  if (identical(kind, "variable")) {
    stop(paste0(
      "distribution<-: greta_array is a variable; a variable gets its prior by being made ",
      "from the distribution (mu <- normal(0, 10)), not by assignment"
    ), call. = FALSE)
  }
  if (identical(kind, "operation") && !isTRUE(ppl("info")(greta_array)$known)) {
    stop(paste0(
      "distribution<-: greta_array is an operation that depends on variables; a ",
      "distribution can be assigned to data only (as_data(), or operations on data only)"
    ), call. = FALSE)
  }
  withCallingHandlers(
    ppl_r_idiom(ppl("assign_distribution")(greta_array, value)),
    tensorbridge_error = function(e) {
      msg <- conditionMessage(e)
      if (grepl("already has a distribution", msg, fixed = TRUE)) {
        e$message <- paste0("distribution<-: greta_array already has a distribution ",
                            "(each data array gets one)")
        stop(e)
      }
      if (grepl("target: ", msg, fixed = TRUE)) { # the runtime names its argument `target`
        e$message <- paste0("distribution<-: greta_array: ",
                            sub("^.*?target: ", "", msg, perl = TRUE))
        stop(e)
      }
    }
  )
  # R data keeps its value (the data array made from it holds the likelihood and is found by
  # model() through the distribution's parameters); a lazy array is returned as it is.
  original
}

#' @rdname distribution
#' @export
distribution <- function(greta_array) {
  if (!is_lazy(greta_array)) {
    stop(sprintf("distribution: greta_array must be a lazy array, not %s",
                 ppl_describe(greta_array)), call. = FALSE)
  }
  res <- ppl("distribution_of")(greta_array)
  if (is.null(res)) NULL else greta_array
}

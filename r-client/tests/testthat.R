library(testthat)
library(tensorbridge)

test_check("tensorbridge")

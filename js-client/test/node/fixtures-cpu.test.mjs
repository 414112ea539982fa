// The same op table on the TF.js cpu backend.
process.env.TB_TF_BACKEND = "cpu";
await import("./fixtures.test.mjs");

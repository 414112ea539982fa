#!/usr/bin/env node
// Static server for the demo and the browser tests: 127.0.0.1 only, with the COOP/COEP headers
// that make the page cross-origin isolated (SharedArrayBuffer + Atomics for sync callbacks).
// `node scripts/serve.mjs [port] [--no-isolation]`
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const TYPES = { ".html": "text/html", ".js": "text/javascript", ".mjs": "text/javascript",
  ".wasm": "application/wasm", ".json": "application/json", ".zip": "application/zip",
  ".whl": "application/zip", ".css": "text/css", ".py": "text/plain", ".png": "image/png" };

export function serve({ port = 0, isolation = true } = {}) {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, "http://127.0.0.1");
    let file = path.join(root, decodeURIComponent(url.pathname));
    if (!file.startsWith(root)) { res.writeHead(403).end(); return; }
    if (fs.existsSync(file) && fs.statSync(file).isDirectory()) {
      if (!url.pathname.endsWith("/")) {  // /demo -> /demo/, so relative URLs resolve inside it
        res.writeHead(301, { Location: `${url.pathname}/${url.search}` }).end();
        return;
      }
      file = path.join(file, "index.html");
    }
    fs.readFile(file, (err, body) => {
      if (err) { res.writeHead(404).end("not found"); return; }
      const headers = { "Content-Type": TYPES[path.extname(file)] ?? "application/octet-stream",
        "Cache-Control": "no-store", "Cross-Origin-Resource-Policy": "same-origin" };
      if (isolation) {
        headers["Cross-Origin-Opener-Policy"] = "same-origin";
        headers["Cross-Origin-Embedder-Policy"] = "require-corp";
      }
      res.writeHead(200, headers).end(body);
    });
  });
  return new Promise((resolve) => server.listen(port, "127.0.0.1", () => resolve(server)));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const port = Number(process.argv[2] ?? 8765);
  const server = await serve({ port, isolation: !process.argv.includes("--no-isolation") });
  console.log(`serving ${root} on http://127.0.0.1:${server.address().port}/demo/`);
}

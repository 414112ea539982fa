// Debian's Chromium for the browser suites, driven by playwright-core: one persistent context in
// a fresh profile, headless, without the GPU (CI machines have none).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";

/** A browser context; `extraArgs` go before the common flags (e.g. --js-flags=--expose-gc). */
export function launchChromium(extraArgs = []) {
  const userDir = fs.mkdtempSync(path.join(os.tmpdir(), "tb-chromium-"));
  return chromium.launchPersistentContext(userDir, {
    executablePath: CHROMIUM, headless: true,
    args: [...extraArgs, "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
      "--no-first-run", "--no-default-browser-check"],
  });
}

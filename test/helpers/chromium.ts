import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

/** The system Chromium the browser tests drive. */
export const CHROMIUM = "/usr/bin/chromium";

/**
 * The `skip` option of a browser test: a reason when Chromium is missing, except under CI, which installs it
 * (.ci/run), so there a missing browser is a failure rather than a silent skip.
 */
export function chromiumSkip(what: string): string | false {
  const skip =
    !existsSync(CHROMIUM) && process.env.CI !== "true"
      ? `${CHROMIUM} is not installed (apt-get install chromium); ${what} needs it`
      : false;
  if (skip) console.log(`Skipping ${what}: ${skip}`);
  return skip;
}

/** Headless Chromium with the flags that keep it quiet and sandbox-free in containers. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

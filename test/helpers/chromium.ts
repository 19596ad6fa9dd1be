import { spawnSync } from 'node:child_process';

/**
 * Debian's chromium, which the browser tests drive through playwright-core (never a browser
 * download). `.ci/run` installs it; locally `apt-get install chromium`.
 */
export function findChromium(): string | null {
  for (const name of ['chromium', 'chromium-browser']) {
    const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
    const path = found.stdout.trim();
    if (found.status === 0 && path) return path;
  }
  return null;
}

/**
 * Registers a browser suite: the real tests when chromium and the Web UI are there, a failing
 * test under CI=true when they are not (a missing browser must not pass CI quietly), and a
 * visible skip otherwise.
 */
export function describeWithBrowser(
  title: string,
  body: (browser: { chromium: string; uiUrl: string }) => void,
): void {
  const chromium = findChromium();
  const uiUrl = (process.env.ACA_TEST_TEMPORAL_UI_URL || process.env.ACA_UI_URL || '').replace(/\/$/, '');
  const missing = [
    ...(chromium ? [] : ['chromium is not installed (apt-get install chromium)']),
    ...(uiUrl
      ? []
      : ['no Temporal Web UI (the reused server gave no ACA_TEST_TEMPORAL_UI_URL; set ACA_UI_URL)']),
  ];
  if (!missing.length) {
    describe(title, () => body({ chromium: chromium!, uiUrl }));
  } else if (process.env.CI === 'true') {
    describe(title, () => {
      test('chromium and the Web UI are available (required when CI=true)', () => {
        throw new Error(`CI=true but ${missing.join('; ')}`);
      });
    });
  } else {
    describe.skip(`${title} (${missing.join('; ')})`, () => body({ chromium: chromium ?? '', uiUrl }));
  }
}

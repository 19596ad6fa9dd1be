import {
  parseSandboxUidPool,
  pickSandboxUid,
  sandboxUidPool,
  SANDBOX_UID_MIN,
  SANDBOX_UID_SPAN,
} from '../../../src/sandbox';

describe('the pool of sandbox uids a process picks from', () => {
  const saved = process.env.ACA_SANDBOX_UIDS;
  afterEach(() => {
    if (saved === undefined) delete process.env.ACA_SANDBOX_UIDS;
    else process.env.ACA_SANDBOX_UIDS = saved;
  });

  test('is the whole range without ACA_SANDBOX_UIDS', () => {
    expect(parseSandboxUidPool(undefined)).toEqual({ min: SANDBOX_UID_MIN, span: SANDBOX_UID_SPAN });
  });

  test('is the part ACA_SANDBOX_UIDS names, and every pick lands in it', () => {
    const first = SANDBOX_UID_MIN + 5000;
    process.env.ACA_SANDBOX_UIDS = `${first}-${first + 9}`;
    expect(sandboxUidPool()).toEqual({ min: first, span: 10 });
    const picks = new Set(Array.from({ length: 200 }, () => pickSandboxUid()));
    for (const uid of picks) expect(uid >= first && uid <= first + 9).toBe(true);
    expect(picks.size).toBeGreaterThan(1);
  });

  test('a pick avoids the uids it is told to, and says so when none is left', () => {
    const first = SANDBOX_UID_MIN + 7000;
    process.env.ACA_SANDBOX_UIDS = `${first}-${first + 2}`;
    for (let i = 0; i < 50; i++) expect(pickSandboxUid([first, first + 2])).toBe(first + 1);
    expect(() => pickSandboxUid([first, first + 1, first + 2])).toThrow(/every sandbox uid of .* is in use/);
  });

  test.each([
    ['not a range', 'lots'],
    ['below the range', `${SANDBOX_UID_MIN - 10}-${SANDBOX_UID_MIN + 10}`],
    ['past the range', `${SANDBOX_UID_MIN}-${SANDBOX_UID_MIN + SANDBOX_UID_SPAN}`],
    ['backwards', `${SANDBOX_UID_MIN + 10}-${SANDBOX_UID_MIN}`],
  ])('%s is refused with the range it must lie in', (_why, spec) => {
    expect(() => parseSandboxUidPool(spec)).toThrow(/ACA_SANDBOX_UIDS must be "first-last" within/);
  });
});

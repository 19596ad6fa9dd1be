/**
 * Names git refuses to put in an index (read-cache.c `verify_path`): a path component that is
 * `.git` in any case, or that NTFS or HFS+ would read as `.git` (`git~1`, `.git. `, `.git::$DATA`,
 * `.g\u200cit`), and a link named like `.gitmodules`. Code under test can make such a folder or
 * file, and `git add` of the whole tree then fails outright, every step of the run. Both the NTFS
 * and the HFS+ rules apply here whatever the repository's core.protectNTFS/protectHFS say: a
 * commit carrying one would check out as a real `.git` on a Windows or macOS user's machine.
 */

/** Code points HFS+ ignores when it compares names (git's `next_hfs_char`). */
const HFS_IGNORABLE = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g;

/** git's `is_ntfs_dotgit` on one piece: `.git` or `git~1`, then only dots and spaces, up to the end or a `:` stream name. */
const NTFS_DOTGIT = /^(?:\.git|git~1)[. ]*(?::|$)/i;

/** The end git's `is_ntfs_dot_generic` accepts after the name: dots and spaces, then the end or a `:`. */
function onlySpacesAndPeriods(rest: string): boolean {
  return /^[. ]*(?::|$)/.test(rest);
}

/**
 * git's `is_ntfs_dot_generic`: `.<name>`, its regular short form (`<first six>~1`…`~4`), or the
 * fall-back short form built from `shortPrefix` (`gi7eba~1`…), each with only dots and spaces after.
 */
function isNtfsDotGeneric(piece: string, name: string, shortPrefix: string): boolean {
  const lower = piece.toLowerCase();
  if (lower.startsWith(`.${name}`)) return onlySpacesAndPeriods(piece.slice(name.length + 1));
  if (lower.startsWith(name.slice(0, 6)) && /^~[1-4]/.test(piece.slice(6))) {
    return onlySpacesAndPeriods(piece.slice(8));
  }
  const fallback = /^([^~]{0,6})~[1-9][0-9]*/.exec(lower);
  if (!fallback || fallback[0].length > 8 || fallback[1] !== shortPrefix.slice(0, fallback[1]!.length)) {
    return false;
  }
  // git looks at the first eight characters only: the tilde form must fill them.
  if (fallback[0].length < 8) return false;
  return onlySpacesAndPeriods(piece.slice(8));
}

function isHfsDot(component: string, name: string): boolean {
  return component.replace(HFS_IGNORABLE, '').toLowerCase() === `.${name}`;
}

/** Whether git (with core.protectNTFS and core.protectHFS on) refuses a path with this component. */
export function isUnaddableName(component: string, isLink = false): boolean {
  if (component.toLowerCase() === '.git') return true;
  // With protectNTFS, git splits components at a backslash too.
  if (component.split('\\').some((piece) => NTFS_DOTGIT.test(piece))) return true;
  if (isHfsDot(component, 'git')) return true;
  if (isLink) {
    return isNtfsDotGeneric(component, 'gitmodules', 'gi7eba') || isHfsDot(component, 'gitmodules');
  }
  return false;
}

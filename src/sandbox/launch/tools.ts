export { findExecutable } from '../../shared/executables';

export function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

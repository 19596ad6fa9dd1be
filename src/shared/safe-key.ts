/** Turns any id (workflow ids may hold any character) into one safe path segment. */
export function safeKey(value: string): string {
  return value
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .replace(/^\.+/, '_')
    .slice(0, 200);
}

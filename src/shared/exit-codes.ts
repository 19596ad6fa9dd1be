/** The exit codes of `aca` commands, shared by the CLI and the checks it runs before starting. */
export const EXIT = { success: 0, failed: 1, badInput: 2, unreachable: 3, cancelled: 4 } as const;

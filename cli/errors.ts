/** An error the CLI reports as one line on stderr, with an exit code, and never a stack trace. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 2,
  ) {
    super(message);
  }
}

/** An error's reason in one line: its first line and, after a program's stderr heading, its last line. */
export function oneLineReason(error: unknown): string {
  const lines = String((error as Error)?.message ?? error).split('\n').map((line) => line.trim()).filter(Boolean);
  return lines.length <= 1 ? (lines[0] ?? 'unknown error') : `${lines[0]} ${lines[lines.length - 1]}`;
}

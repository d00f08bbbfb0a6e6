/** An error the CLI reports as one line on stderr, with an exit code, and never a stack trace. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 2,
  ) {
    super(message);
  }
}

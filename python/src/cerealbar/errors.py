"""The exceptions the package raises: every misuse and every failure of the engine process has its own."""


class CerealBarError(Exception):
    """Base class of the package's errors."""


class NodeUnavailableError(CerealBarError):
    """`node` is not on PATH (or where CEREALBAR_NODE points), or it is older than the engine needs."""


class RendererError(CerealBarError):
    """The frame renderer (`cerealbar frames`) failed: it refused a frame, drew none in time, or died again after a restart."""


class RendererUnavailableError(RendererError):
    """No frame renderer could be started: none was found, or it did not start. The message says what to install or set."""


class EngineCrashedError(CerealBarError):
    """The engine's Node process died. The message quotes the end of its stderr; the next reset() starts a new one."""

    def __init__(self, message: str, exit_code: int | None = None, stderr_tail: str = ""):
        super().__init__(message)
        self.exit_code = exit_code
        self.stderr_tail = stderr_tail


class EngineTimeoutError(CerealBarError, TimeoutError):
    """The engine did not answer in time. Its process was killed; the next reset() starts a new one."""


class EngineError(CerealBarError):
    """A bug in the engine process: the message carries its stack. Please report it."""


class EnvClosedError(CerealBarError):
    """The environment was closed."""


class EpisodeOverError(CerealBarError):
    """step() with no episode running: call reset() first, and again after terminated or truncated."""


class IllegalActionError(CerealBarError, ValueError):
    """An action outside the action space."""


class InvalidRequestError(CerealBarError, ValueError):
    """The engine refused an argument: an option, an episode, a log file (kind "invalid"), or a seed that gives no game (kind "setup")."""

    def __init__(self, message: str, kind: str = "invalid"):
        super().__init__(message)
        self.kind = kind

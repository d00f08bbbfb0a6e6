/** The AgentError a promise rejects with, checked to be of `kind` (tests of agent programs). */
import { AgentError, type AgentErrorKind } from '../../shared/agents/node/processAgent';

export async function agentError(promise: Promise<unknown>, kind: AgentErrorKind): Promise<AgentError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AgentError);
  expect((error as AgentError).kind).toBe(kind);
  return error as AgentError;
}

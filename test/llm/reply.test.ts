/** The reply parser: the JSON reply, alone or fenced, to a plan; every way it can be unusable, with the message the model is sent. */
import { jsonText, parseReply, type ReplyCheck } from '../../shared/agents/node/llm/reply';

const FOLLOWER: ReplyCheck = { role: 'follower', legal: ['MF', 'MB', 'RL', 'RR', 'DONE'] };
const LEADER: ReplyCheck = { role: 'leader', legal: ['MF', 'MB', 'RL', 'RR', 'END'], canInstruct: true, maxInstructionLength: 20 };

describe('reply parser', () => {
  test.each([
    ['{"actions": ["MF", "RL"]}', ['MF', 'RL']],
    ['  {"actions": ["mf", " rr ", "done"], "extra": 1}  ', ['MF', 'RR', 'DONE']],
    ['Here is my plan:\n```json\n{"thought": "go", "actions": ["MB"]}\n```\nGood luck.', ['MB']],
  ])('follower %j -> %j', (reply, actions) => {
    expect(parseReply(reply, FOLLOWER)).toMatchObject({ status: 'ok', actions });
  });

  test('keeps the thought', () => {
    expect(parseReply('{"thought": "the card is ahead", "actions": ["MF"]}', FOLLOWER)).toEqual({ status: 'ok', actions: ['MF'], thought: 'the card is ahead' });
  });

  test('an empty list is no plan (empty_plan), with what is allowed and the thought kept', () => {
    expect(parseReply('```\n{"actions": []}\n```', FOLLOWER)).toEqual({ status: 'empty_plan', actions: [], message: 'the plan is empty: give at least one action; allowed now: MF, MB, RL, RR, DONE' });
    expect(parseReply('{"thought": "wait", "actions": []}', { ...LEADER, canInstruct: false, legal: ['END'] })).toEqual({
      status: 'empty_plan',
      actions: [],
      thought: 'wait',
      message: 'the plan is empty: give at least one action; allowed now: END',
    });
  });

  test('the first fenced block is read, not the text around it', () => {
    expect(jsonText('a\n```json\n{"x": 1}\n```\n```json\n{"y": 2}\n```')).toBe('{"x": 1}');
    expect(jsonText('no fence')).toBe('no fence');
  });

  test.each([
    ['Sure, I will move forward.', /^the reply is not a usable JSON object: it is not JSON \(/],
    ['["MF"]', /it is not a JSON object$/],
    ['null', /it is not a JSON object$/],
    ['{"action": "MF"}', /it has no "actions" list$/],
    ['{"actions": "MF"}', /it has no "actions" list$/],
    ['{"actions": ["MF"], "thought": 3}', /"thought" must be a string$/],
    ['{"actions": ["MF", "JUMP"]}', /actions\[1\] is "JUMP": not one of MF, MB, RL, RR, DONE$/],
    ['{"actions": ["END"]}', /actions\[0\] is "END": not one of MF, MB, RL, RR, DONE$/],
    ['{"actions": [{"instruction": "go"}]}', /actions\[0\] is \{"instruction":"go"\}: not one of/],
  ])('follower %j is a format error', (reply, message) => {
    const parsed = parseReply(reply, FOLLOWER);
    expect(parsed.status).toBe('format_error');
    expect((parsed as { message: string }).message).toMatch(message);
  });

  test('a first action not allowed now is illegal, with what is allowed; later actions are the host\'s to check', () => {
    expect(parseReply('{"actions": ["MF", "DONE"]}', { role: 'follower', legal: ['RL', 'RR', 'DONE'] })).toEqual({
      status: 'illegal',
      actions: ['MF', 'DONE'],
      message: 'MF is not allowed now; allowed now: RL, RR, DONE',
    });
    expect(parseReply('{"actions": ["RL", "MF"]}', { role: 'follower', legal: ['RL', 'RR', 'DONE'] }).status).toBe('ok');
  });

  test('leader: moves, END and instructions', () => {
    expect(parseReply('{"actions": [{"instruction": "get the red star"}, "end"]}', LEADER)).toEqual({ status: 'ok', actions: [{ instruction: 'get the red star' }, 'END'] });
    expect(parseReply('{"actions": ["DONE"]}', LEADER)).toMatchObject({ status: 'format_error', message: expect.stringMatching(/not one of MF, MB, RL, RR, END or \{"instruction": "..."\}$/) });
    expect(parseReply('{"actions": [{"instruction": "a", "to": "b"}]}', LEADER).status).toBe('format_error');
    expect(parseReply('{"actions": [{"instruction": 3}]}', LEADER).status).toBe('format_error');
  });

  test('leader: an empty or too long instruction, anywhere in the plan, and an instruction when none may be written, are illegal', () => {
    expect(parseReply('{"actions": ["MF", {"instruction": "   "}]}', LEADER)).toMatchObject({ status: 'illegal', message: "actions[1]: an instruction's text must not be empty" });
    expect(parseReply('{"actions": [{"instruction": "123456789012345678901"}]}', LEADER)).toMatchObject({ status: 'illegal', message: 'actions[0]: the instruction has 21 characters, more than the 20 allowed' });
    // Counted as the engine counts: white space collapsed, code points.
    expect(parseReply('{"actions": [{"instruction": "  1234567890   1234567890  "}]}', LEADER).status).toBe('illegal');
    expect(parseReply('{"actions": [{"instruction": "1234567890 123456789"}]}', LEADER).status).toBe('ok');
    expect(parseReply('{"actions": [{"instruction": "go"}]}', { ...LEADER, canInstruct: false, legal: ['END'] })).toMatchObject({
      status: 'illegal',
      message: 'an instruction cannot be written now; allowed now: END',
    });
    expect(parseReply('{"actions": ["MF"]}', { ...LEADER, legal: ['END'] })).toMatchObject({ status: 'illegal', message: 'MF is not allowed now; allowed now: END, {"instruction": "..."}' });
  });
});

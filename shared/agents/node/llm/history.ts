/**
 * keep-history: the follower's earlier calls for its current instruction, sent again. Each call is
 * kept as it went (its observation's message, the model's reply, and a re-ask's correction and
 * reply when there was one) and the next calls for the same instruction carry them, in order,
 * just before their own observation's message, after the template's messages before it (the
 * system message and the worked examples stay first and unchanged). A new instruction, and a new
 * episode, start a fresh conversation. A call that got no reply (a backend error, a timeout, a
 * spent budget) is not kept: its question had no answer. With images on, the earlier calls are
 * carried as text: an earlier frame is a view the follower has moved on from (the observation's
 * memory keeps what it saw), and each would cost its image's tokens again in every call.
 *
 * At most HISTORY_MAX_MESSAGES earlier messages are carried, the oldest calls dropped whole, so
 * that a long instruction costs at most that many messages more a call (about 12 x 400 tokens with
 * the default template): an instruction takes one to three calls mostly, and the observation
 * already says what the follower remembers of the map.
 */
import type { RequestMessage } from './chat';
import { textOf } from './images';
import type { ChatMessage } from './templates';
import type { RecordHeader } from './records';

export const HISTORY_MAX_MESSAGES = 12;

export class Conversation<O> {
  /** The instruction (the seat's topic) of the calls kept. */
  private topic: string | null = null;
  private calls: (readonly ChatMessage[])[] = [];
  /** Where the current call's own messages begin among those it sends. */
  private ownFrom = 0;

  /** `topicOf` names what a conversation lasts for (the follower's instruction); absent: nothing is kept. */
  constructor(private readonly topicOf: ((observation: O) => string) | undefined) {}

  /** What the records' header settings add (nothing when off). */
  get settings(): Pick<RecordHeader['settings'], 'keepHistory' | 'historyMaxMessages'> {
    return this.topicOf ? { keepHistory: true, historyMaxMessages: HISTORY_MAX_MESSAGES } : {};
  }

  clear(): void {
    this.topic = null;
    this.calls = [];
  }

  /**
   * The messages to send for `observation`: the template's, `rendered`, with the kept calls before
   * its last message; `carried`, how many messages they are (null when nothing is kept).
   */
  around(observation: O, rendered: readonly ChatMessage[]): { messages: ChatMessage[]; carried: number | null } {
    if (!this.topicOf) return { messages: [...rendered], carried: null };
    const topic = this.topicOf(observation);
    if (topic !== this.topic) {
      this.clear();
      this.topic = topic;
    }
    const carried = this.calls.flat();
    this.ownFrom = rendered.length - 1 + carried.length;
    return { messages: [...rendered.slice(0, -1), ...carried, rendered[rendered.length - 1]], carried: carried.length };
  }

  /** Keeps the call just made: the messages its last request sent (`around`'s, and a re-ask's) and the reply to them. */
  keep(sent: readonly RequestMessage[] | undefined, reply: string | null): void {
    if (!this.topicOf || !sent || reply === null) return;
    const own = sent.slice(this.ownFrom).map((message) => ({ role: message.role, content: textOf(message) }));
    this.calls.push([...own, { role: 'assistant', content: reply }]);
    let messages = this.calls.reduce((sum, call) => sum + call.length, 0);
    while (messages > HISTORY_MAX_MESSAGES) messages -= this.calls.shift()!.length;
  }
}

/**
 * Version of the rules and generators. Bump it whenever a change could make the same seed or the
 * same actions produce a different game; replay then trusts a log's recorded random outcomes.
 */
export const ENGINE_VERSION = '1.0.0';

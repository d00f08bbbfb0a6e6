/** `cerealbar serve`: the game server, the HTTP API and the client, on an embedded store. */
import { resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { Cluster, redactUrl } from '../../server/cluster';
import { mountApi } from '../../server/http/api';
import { adminTokenFingerprint, resolveAdminToken, type AdminToken } from '../../server/adminToken';
import { DEFAULT_MAX_EVENT_LOOP_DELAY_MS } from '../../server/admission';
import { GameMetrics } from '../../server/metrics';
import { mountClient } from '../../server/http/client';
import { checkCorsOrigins, checkFrameAncestors } from '../../server/http/guard';
import { DEFAULT_TRUST_PROXY } from '../../server/http/clientAddress';
import { startGameServer } from '../../server/index';
import { PgGameStore } from '../../server/store/PgGameStore';
import { PgWorkerStore } from '../../server/store/PgWorkerStore';
import { SqliteGameStore } from '../../server/store/SqliteGameStore';
import type { GameStore, Recovery, WorkerStore } from '../../server/store/types';
import { SqliteWorkerStore } from '../../server/store/SqliteWorkerStore';
import { tightenDataDir, type Tightened } from '../../server/store/ownerOnly';
import { checkSeatAgent, DEFAULT_SEAT_AGENTS, seatAgentsFrom, startSeatAgent, type SeatAgentSpecs, type StartSeatAgent } from '../../server/rooms/seatAgents';
import { DEFAULT_AGENT_GAMES_PER_CLIENT, defaultMaxAgentGames } from '../../server/rooms/agentGames';
import { serverLlmBudget } from '../../server/llmBudget';
import type { RunSpend } from '../../shared/agents/node/llm/agent';
import { profileConfig, RULES_PROFILES, type GameConfig, type RulesProfile } from '../../shared/engine/config';
import { ROLES, type Role } from '../../shared/engine/state';
import { addLlmOptions, addLlmServerOptions, checkLlmOptionsUsed, llmStarter, type LlmCliOptions } from '../llmOptions';
import { LLM_AGENT } from '../../shared/agents/catalogue';
import { closeSharedFrameRenderer } from '../../shared/agents/node/llm/images';
import { startArmAgent } from '../../server/study/armAgents';
import { loadStudyFiles, type LoadedStudy } from '../../server/study/loadStudy';
import { armSeat } from '../../shared/study/arms';
import { derivedCodesProblem } from '../../shared/study/completionCodes';
import { StudyFileError } from '../../shared/study/parseStudy';
import { roleSettingNote, rolesNobodyCanPlay } from '../../shared/study/roles';
import { studyGameConfig, type Study } from '../../shared/study/studyFile';
import { CliError, oneLineReason } from '../errors';
import { humanPartnerWarnings } from '../study/partnerWording';
import { checkStoreUrl, integerOption } from '../options';

interface ServeOptions extends LlmCliOptions {
  port: number;
  host: string;
  data: string;
  rules: RulesProfile;
  liveFeedback?: boolean;
  cancelInstructions?: boolean;
  leaderSeconds?: number;
  followerSeconds?: number;
  reconnectSeconds: number;
  drainSeconds: number;
  maxGames?: number;
  maxEventLoopDelayMs: number;
  corsOrigin: string[];
  frameAncestors: string[];
  study: string[];
  redis?: string;
  publicAddress?: string;
  store?: string;
  syncEachAction?: boolean;
  botLeader: string;
  botFollower: string;
  agentGamesPerAddress: number;
  maxAgentGames: number;
  trustProxy: string | number | boolean;
}

/**
 * `--trust-proxy`: `none`, a number of proxies in front, or the proxies' addresses and subnets
 * (express's `trust proxy`, whose names loopback, linklocal and uniquelocal it takes too).
 */
function trustProxyOption(value: string): string | number | boolean {
  const text = value.trim();
  if (text === 'none') return false;
  if (/^\d+$/.test(text)) return Number(text);
  const bad = text.split(/\s*,\s*/).find((entry) => !/^(loopback|linklocal|uniquelocal|[0-9a-f.:]+(\/\d{1,3})?)$/i.test(entry));
  if (bad !== undefined) throw new CliError(`--trust-proxy: ${JSON.stringify(bad)} is not a proxy address, a subnet (10.0.0.0/8) or one of loopback, linklocal, uniquelocal; or write none, or a number of proxies`);
  return text;
}

/** A space- or comma-separated list, checked by `check` (which names the first bad entry). */
const listOption = (name: string, check: (items: string[]) => string | null) => (value: string) => {
  const items = value.split(/[\s,]+/).filter(Boolean);
  const problem = items.length === 0 ? 'the list is empty' : check(items);
  if (problem) throw new CliError(`${name}: ${problem}`);
  return items;
};

const secondsOption = (name: string) => integerOption(name, 1, 3600);

const PROFILE_NAMES = Object.keys(RULES_PROFILES) as RulesProfile[];

/** The config of quick play's games: the profile, with each option given on top of it. */
function quickPlayConfig(options: Pick<ServeOptions, 'rules' | 'liveFeedback' | 'cancelInstructions'>): GameConfig {
  const { liveFeedback, cancelInstructions } = options;
  return profileConfig(options.rules, { ...(liveFeedback !== undefined && { liveFeedback }), ...(cancelInstructions !== undefined && { cancelInstructions }) });
}

/** The rules of a config in one line: "cb2 (live feedback on, cancelling on; a leader's turn 60 s, a follower's 180 s)". */
function rulesLine(profile: string, config: GameConfig, seconds: { leader?: number; follower?: number }): string {
  const onOff = (on: boolean) => (on ? 'on' : 'off');
  return `${profile} (live feedback ${onOff(config.liveFeedback)}, cancelling ${onOff(config.cancelInstructions)}; a leader's turn ${seconds.leader ?? config.turnSeconds.leader} s, a follower's ${seconds.follower ?? config.turnSeconds.follower} s)`;
}

/** Long enough for a whole game: 32 rounds at most (6 and every extra turn), a minute each. */
const DEFAULT_DRAIN_SECONDS = 35 * 60;
const DRAIN_POLL_MS = 1000;

const collect = (value: string, previous: string[]) => [...previous, value];

/**
 * The agents a player may ask for as its partner, each started once and closed before the server
 * takes games: an agent that cannot play a live seat stops `serve` (exit 2) with the reason.
 */
async function checkSeatAgents(specs: SeatAgentSpecs, start: StartSeatAgent): Promise<void> {
  for (const role of ['leader', 'follower'] as const) {
    try {
      await checkSeatAgent(role, specs[role], start);
    } catch (error) {
      throw new CliError(`--bot-${role} ${JSON.stringify(specs[role])}: ${oneLineReason(error)}`);
    }
  }
}

/**
 * The agents serve starts for a seat: the LLM agent as the --llm-* options say (its call records in
 * `recordDir`, its calls spent from the server's `budget`), any other as the registry does.
 */
function servedAgents(llm: LlmCliOptions, recordDir: string, budget: RunSpend | null): StartSeatAgent {
  return (role: Role, spec: string) => startSeatAgent(role, spec, llmStarter(llm, recordDir, { spend: budget }));
}

/** Each study's arms' agents, started once and closed before the server takes games: one that cannot play stops `serve` (exit 2) with the reason. */
async function checkArmAgents(studies: readonly Study[], recordDir: string): Promise<void> {
  for (const study of studies) {
    for (const arm of study.arms ?? []) {
      try {
        const seated = await startArmAgent(arm, armSeat(study), recordDir);
        await seated.agent.close?.();
      } catch (error) {
        throw new CliError(`study ${study.id}: arm ${arm.id} (${JSON.stringify(arm.agent)}) cannot play the ${armSeat(study)}'s seat: ${oneLineReason(error)}`);
      }
    }
  }
}

/** The study files, loaded and checked before anything else starts: a bad one stops `serve` (exit 2). */
function loadStudiesForServe(files: readonly string[]): LoadedStudy[] {
  try {
    return loadStudyFiles(files);
  } catch (error) {
    if (error instanceof StudyFileError) throw new CliError(error.message);
    throw error;
  }
}

export function registerServeCommand(program: Command): void {
  const command = program
    .command('serve')
    .description('run the game server with the HTTP API, storing games and logs in a data directory')
    .option('--port <port>', 'port to listen on', integerOption('--port', 0, 65535), 2567)
    .option('--host <host>', 'address to listen on', '0.0.0.0')
    .option('--data <dir>', 'directory for the game index and logs (created if missing)', 'data')
    .addOption(new Option('--rules <profile>', "the rules of quick play's games (docs/rules.md); a study's are its study file's").choices(PROFILE_NAMES).default('cerealbar'))
    .option('--live-feedback', "the leader may send live feedback in the follower's turn, whatever --rules says")
    .option('--no-live-feedback', 'the leader may not, whatever --rules says')
    .option('--cancel-instructions', "the leader may cancel the follower's instructions in its turn, whatever --rules says")
    .option('--no-cancel-instructions', 'the leader may not, whatever --rules says')
    .option('--leader-seconds <s>', "seconds in a leader's turn (default: the rules', 45 in cerealbar)", secondsOption('--leader-seconds'))
    .option('--follower-seconds <s>', "seconds in a follower's turn (default: the rules', 15 in cerealbar)", secondsOption('--follower-seconds'))
    .option('--reconnect-seconds <s>', 'seconds a dropped player may take to come back', integerOption('--reconnect-seconds', 0, 3600), 30)
    .option('--max-games <n>', 'games (waiting or in play) this process holds at most; a new game beyond them is refused as busy (HTTP 503, Retry-After), or made on another process with room (docs/deploy.md)', integerOption('--max-games', 1, 1_000_000))
    .option('--max-event-loop-delay-ms <ms>', "the process is busy, and refuses new games, while the p99 of its event loop's delay is above this two seconds in a row (0: never)", integerOption('--max-event-loop-delay-ms', 0, 60_000), DEFAULT_MAX_EVENT_LOOP_DELAY_MS)
    .option('--drain-seconds <s>', 'on SIGTERM, how long games in play may go on to their end before the rest are ended (no new games meanwhile)', integerOption('--drain-seconds', 0, 24 * 3600), DEFAULT_DRAIN_SECONDS)
    .option('--cors-origin <origins>', 'origins (https://host[:port]) whose pages may call the server; by default only its own', listOption('--cors-origin', checkCorsOrigins), [])
    .option('--frame-ancestors <sources>', "sites that may show the pages in a frame (a crowdsourcing site's, e.g. https://app.prolific.com); by default only the server's own", listOption('--frame-ancestors', checkFrameAncestors), [])
    .option('--study <file>', 'run the study in this study file (YAML or JSON; repeat for several); checked before the server starts', collect, [])
    .option('--redis <url>', 'run as one of several processes sharing matchmaking through this Redis (redis://host:port); also REDIS_URL', process.env.REDIS_URL || undefined)
    .option('--public-address <host[:port][/path]>', 'with --redis: where players reach this process (its own port, or its path behind a proxy); also PUBLIC_ADDRESS', process.env.PUBLIC_ADDRESS || undefined)
    .option('--sync-each-action', "flush each action to disk before anyone sees it, so that a crash of the machine (not only of the process) loses none; costs a disk flush per action (docs/deploy.md)")
    .option('--bot-leader <agent>', 'the agent leader a follower may ask for (the lobby\'s "Play as follower with an agent leader"): a built-in agent, llm (with the --llm-* options) or a command that speaks the agent protocol, started for each game', DEFAULT_SEAT_AGENTS.leader)
    .option('--bot-follower <agent>', 'the agent follower a leader may ask for (the lobby\'s "Play as leader with a scripted follower"): a built-in agent, llm (with the --llm-* options) or a command that speaks the agent protocol, started for each game', DEFAULT_SEAT_AGENTS.follower)
    .option('--agent-games-per-address <n>', 'games with an agent partner one player (an address, or a worker id) may have at once; more are refused (429) until one ends', integerOption('--agent-games-per-address', 1, 1000), DEFAULT_AGENT_GAMES_PER_CLIENT)
    .option('--max-agent-games <n>', 'games with an agent partner the whole server may have at once (with --redis, all its processes together); more are refused (503); default: 8 per core', integerOption('--max-agent-games', 1, 1_000_000), defaultMaxAgentGames())
    .option('--trust-proxy <proxies>', "the reverse proxies whose X-Forwarded-For says who a request is from (a study's limits per address, and who may be partners): none, a number of proxies, or addresses and subnets", trustProxyOption, DEFAULT_TRUST_PROXY)
    .option('--store <url>', "keep the games in PostgreSQL (postgres://user:password@host:port/database), shared by processes on several machines; each game's log is still written to --data first; also STORE_URL", process.env.STORE_URL || undefined)
    .action(async (options: ServeOptions) => {
      const studies = loadStudiesForServe(options.study);
      const config = quickPlayConfig(options);
      checkStoreUrl(options.store);
      const seatAgents = { leader: options.botLeader, follower: options.botFollower };
      // --llm-records also says where the studies' LLM arms (configured in their study files) write their call records.
      const llmArms = studies.some((study) => study.arms?.some((arm) => arm.agent === LLM_AGENT));
      checkLlmOptionsUsed(llmArms ? { ...options, llmRecords: undefined } : options, { leader: [options.botLeader], follower: [options.botFollower] }, '--bot-leader or --bot-follower');
      // What the LLM agent partners of all games may spend together (P-150); serve warns once at 80% of it.
      const llmBudget = serverLlmBudget({ maxCalls: options.llmMaxCallsTotal, maxCost: options.llmMaxCost }, (line) => process.stderr.write(`cerealbar: warning: ${line}\n`));
      // An LLM agent's call records go beside the data directory's logs, in a folder of their own (logs/ holds only game logs).
      const startAgent = servedAgents(options, options.llmRecords ?? resolve(options.data, 'llm'), llmBudget);
      await checkSeatAgents(seatAgents, startAgent);
      const armRecords = options.llmRecords ?? resolve(options.data, 'llm');
      await checkArmAgents(studies, armRecords);
      if ((options.redis === undefined) !== (options.publicAddress === undefined)) {
        throw new CliError('--redis and --public-address go together: each process of several needs the address its players reach it at');
      }
      let cluster: Cluster | undefined;
      if (options.redis !== undefined && options.publicAddress !== undefined) {
        try {
          cluster = await Cluster.connect({ redisUrl: options.redis, publicAddress: options.publicAddress });
        } catch (error) {
          throw new CliError((error as Error).message);
        }
      }
      const dataDir = resolve(options.data);
      // The data directory is its owner's only, whatever the umask; one made looser before is made so now (P-128).
      let tightened: Tightened;
      try {
        tightened = tightenDataDir(dataDir);
      } catch (error) {
        await cluster?.stop();
        throw new CliError(`${dataDir}: cannot use the data directory: ${(error as Error).message}`);
      }
      const listed = (items: readonly string[]) => `${items.slice(0, 3).join(', ')}${items.length > 3 ? `, and ${items.length - 3} more` : ''}`;
      if (tightened.changed.length > 0) {
        process.stderr.write(
          `cerealbar: warning: ${dataDir}: other users had access to ${tightened.changed.length} of the data directory's folders and files: ${listed(tightened.changed)}; made them its owner's only (folders 700, files 600). Whoever could read them may have copied the logs and the workers' ids\n`,
        );
      }
      if (tightened.problems.length > 0) process.stderr.write(`cerealbar: warning: ${dataDir}: could not make these its owner's only: ${listed(tightened.problems)}\n`);
      let admin: AdminToken;
      try {
        admin = resolveAdminToken(process.env, dataDir);
      } catch (error) {
        await cluster?.stop();
        throw new CliError((error as Error).message);
      }
      let store: GameStore;
      let recovery: Recovery;
      try {
        const durability = { syncEachAction: options.syncEachAction === true };
        store = options.store === undefined ? SqliteGameStore.open(dataDir, durability) : await PgGameStore.open(options.store, dataDir, durability);
      } catch (error) {
        await cluster?.stop();
        const where = options.store === undefined ? dataDir : `${redactUrl(options.store)} (logs first in ${dataDir})`;
        throw new CliError(`${where}: cannot open the game store: ${(error as Error).message}`);
      }
      try {
        recovery = await store.recover();
      } catch (error) {
        await store.close();
        throw new CliError(`${dataDir}: cannot recover the games of the last run: ${(error as Error).message}`);
      }
      // A study's workers are kept next to the games (workers.sqlite, or the database), only when studies are run.
      let workers: WorkerStore | undefined;
      if (studies.length > 0) {
        try {
          workers = options.store === undefined ? SqliteWorkerStore.open(dataDir) : await PgWorkerStore.open(options.store);
        } catch (error) {
          await store.close();
          await cluster?.stop();
          throw new CliError(`${options.store === undefined ? dataDir : redactUrl(options.store)}: cannot open the worker store: ${(error as Error).message}`);
        }
      }
      const { recovered, removed, unreadable } = recovery;
      let clientBuilt = false;
      const metrics = new GameMetrics();
      const server = await startGameServer({
        port: options.port,
        host: options.host,
        services: { startLog: (header, info) => store.startGame(header, info), metrics, seatAgents: seatAgentsFrom(seatAgents, startAgent) },
        roomSettings: {
          rules: options.rules,
          config,
          leaderTurnSeconds: options.leaderSeconds,
          followerTurnSeconds: options.followerSeconds,
          reconnectSeconds: options.reconnectSeconds,
        },
        http: { corsOrigins: options.corsOrigin, frameAncestors: options.frameAncestors },
        agentGames: {
          perClient: options.agentGamesPerAddress,
          total: options.maxAgentGames,
          ...(llmBudget && { llm: { roles: ROLES.filter((role) => seatAgents[role] === LLM_AGENT), budget: llmBudget } }),
        },
        trustProxy: options.trustProxy,
        admission: { maxGames: options.maxGames, maxEventLoopDelayMs: options.maxEventLoopDelayMs },
        // Every process sharing the data directory (or the database) has this token: their address tags agree.
        addressKey: admin.token,
        studies,
        workers,
        armRecords,
        cluster,
        routes: (app) => {
          mountApi(app, { store, adminToken: admin.token, studies, workers, metrics });
          clientBuilt = mountClient(app).built;
        },
      }).catch(async (error: NodeJS.ErrnoException) => {
        await store.close();
        await workers?.close();
        await cluster?.stop();
        const why = error.code === 'EADDRINUSE' ? `port ${options.port} is already in use` : error.message;
        throw new CliError(`cannot start the server: ${why}`);
      });
      const say = (line: string) => process.stdout.write(`${line}\n`);
      say(`CerealBar server listening on http://localhost:${server.port} (game rooms over WebSocket on the same port)`);
      say(
        clientBuilt
          ? `Play: http://localhost:${server.port}/   Replay viewer: http://localhost:${server.port}/replay/`
          : 'The browser client is not built: run "npm run build:client" (npm start does it) and restart to serve it',
      );
      if (options.store !== undefined) say(`Games in PostgreSQL at ${redactUrl(options.store)}, for every process of every machine`);
      say(`${options.store === undefined ? 'Games and logs' : 'Logs written first'}: ${dataDir}${recovered.length > 0 ? ` (closed ${recovered.length} unfinished log(s): ${recovered.join(', ')})` : ''}`);
      const seconds = { leader: options.leaderSeconds, follower: options.followerSeconds };
      say(`Rules of quick play: ${rulesLine(options.rules, config, seconds)}`);
      say(`Agent partners, for players who ask for one: leader ${JSON.stringify(seatAgents.leader)}, follower ${JSON.stringify(seatAgents.follower)}`);
      say(`  at most ${options.agentGamesPerAddress} games with them at once per player, ${options.maxAgentGames} in all${llmBudget ? `; the LLM agent's budget: ${llmBudgetWords(llmBudget)}` : ''}`);
      if (cluster) say(`One of several processes: matchmaking through Redis at ${redactUrl(options.redis!)}, players reach this one at ${cluster.publicAddress}`);
      // A study's workers whose games recovery closed learn of their end, as of any game's.
      const tellWorkers = (gameIds: readonly string[]) =>
        Promise.all(gameIds.map((gameId) => store.getGame(gameId)))
          .then((games) => server.gamesRecovered(games.filter((game) => game !== null), async (gameId) => store.getGame(gameId)))
          .catch((error: Error) => process.stderr.write(`cerealbar: warning: the workers of games closed by recovery could not be told: ${error.message}\n`));
      await tellWorkers(recovered);
      // Records a killed process held for an unreachable database are written from the games now (P-155).
      try {
        const reconciled = await server.reconcileStudyRecords(store);
        if (reconciled > 0) say(`Wrote ${reconciled} study worker record(s) of games' starts and ends that the worker store had not taken (a process stopped before it could)`);
      } catch (error) {
        process.stderr.write(`cerealbar: warning: the study workers' records could not be checked against the games: ${(error as Error).message}\n`);
      }
      // Other processes may share the data directory: the games of one that stops are closed here.
      store.keepAlive(
        ({ recovered: closed }) => {
          say(`Closed ${closed.length} unfinished log(s) of a process that is gone: ${closed.join(', ')}`);
          void tellWorkers(closed);
        },
        (error) => process.stderr.write(`cerealbar: warning: could not check for the games of stopped processes: ${error.message}\n`),
      );
      if (removed.length > 0) say(`Removed ${removed.length} empty log(s) of games that never started: ${removed.join(', ')}`);
      if (unreadable.length > 0) process.stderr.write(`cerealbar: warning: left alone ${unreadable.length} file(s) in logs/ that are not game logs: ${unreadable.join(', ')}\n`);
      say(`Game data API: http://localhost:${server.port}/api/games, metrics: /metrics, both with the header "Authorization: Bearer <token>"`);
      for (const study of studies) {
        say(`Study ${study.id} (${study.platform.kind}, pool ${study.pool}): participants enter at http://localhost:${server.port}/study/${study.id} (with the platform's ids: cerealbar study links)`);
        if (study.arms) say(`  its arms, the ${armSeat(study)} of each game, drawn by weight: ${study.arms.map((arm) => `${arm.id} (${JSON.stringify(arm.agent)}, weight ${arm.weight})`).join(', ')}`);
        const studySeconds = { leader: study.time.leaderTurnSeconds ?? seconds.leader, follower: study.time.followerTurnSeconds ?? seconds.follower };
        const { game } = study;
        say(`  its rules: ${game ? rulesLine(game.rules, studyGameConfig(game), studySeconds) : `quick play's, ${rulesLine(options.rules, config, studySeconds)}`}`);
        say(
          options.store === undefined
            ? `  its workers: cerealbar study workers --study FILE --data ${options.data}; its bonuses: cerealbar study bonuses`
            : `  its workers and bonuses (kept in the database): cerealbar study workers (or bonuses) --study FILE --store URL, or the admin page`,
        );
        // A role nobody can come to play: no game of the study starts until the researcher acts.
        if (workers && rolesNobodyCanPlay(study, await workers.list(study.id)).length > 0) process.stderr.write(`cerealbar: warning: study ${study.id}: ${roleSettingNote(study.roles).text}\n`);
        // Codes made from one stem, or from the public id: one code learned gives the others away (P-126).
        const derived = derivedCodesProblem(study);
        if (derived) process.stderr.write(`cerealbar: warning: study ${study.id}: ${derived}\n`);
        for (const warning of humanPartnerWarnings(study)) process.stderr.write(`cerealbar: warning: ${warning}\n`);
      }
      if (studies.length > 0) say(`Admin page (the studies live, with the admin token): http://localhost:${server.port}/admin`);
      // The token itself only once, when it is made: service logs keep what a server prints (P-129).
      const fingerprint = `fingerprint ${adminTokenFingerprint(admin.token)}`;
      say(
        admin.source === 'env'
          ? `Admin token: from ADMIN_TOKEN (${fingerprint})`
          : admin.source === 'made'
            ? `Admin token (made now and kept in ${admin.file} for every start, shown only this once; set ADMIN_TOKEN to choose one; ${fingerprint}): ${admin.token}`
            : `Admin token: the one kept in ${admin.file} (${fingerprint}; set ADMIN_TOKEN to choose one)`,
      );
      let stopping = false;
      const stop = async (signal: string) => {
        if (stopping) return;
        stopping = true;
        say(`${signal}: ending games and closing logs...`);
        const failedBefore = store.failedGames().length;
        let problem = '';
        let unended: readonly string[] = [];
        let unwritten: readonly string[] = [];
        try {
          await server.close();
          // Every game has ended by now, unless its room could not end it: its log stays open for the next start.
          unended = store.gamesBeingWritten();
          await store.close();
          unwritten = await server.unwrittenStudyRecords();
          await workers?.close();
          await closeSharedFrameRenderer();
        } catch (error) {
          problem = ` (${(error as Error).message})`;
        }
        const unsaved = [...store.failedGames().slice(failedBefore), ...unended];
        if (unsaved.length > 0 || unwritten.length > 0 || problem) {
          const games = unsaved.length > 0 ? `: ${unsaved.length} game(s) could not be saved completely (${unsaved.join(', ')}); the next start closes their logs` : '';
          const records = unwritten.length > 0 ? `; ${unwritten.length} study record(s) could not be written (${unwritten.join('; ')}): the admin page's workers table misses them` : '';
          process.stderr.write(`cerealbar: ${signal}: stopped, but storage failed${games}${records}${problem}\n`);
          process.exit(1);
        }
        say('stopped');
        process.exit(0);
      };
      // SIGTERM (a deploy, a process manager) drains: no new games, the games in play end by
      // themselves, within --drain-seconds. SIGINT (Ctrl-C), or a second signal, stops at once.
      let draining = false;
      const drain = async () => {
        if (draining || stopping) return void stop('SIGTERM');
        draining = true;
        const inPlay = await server.drain();
        say(`SIGTERM: draining: no new games; ${inPlay} game(s) in play may finish within ${options.drainSeconds} s (a second signal stops at once)`);
        const deadline = Date.now() + options.drainSeconds * 1000;
        while (Date.now() < deadline && (await server.gamesInPlay()) > 0) await new Promise((resolve) => setTimeout(resolve, DRAIN_POLL_MS));
        await stop('SIGTERM');
      };
      process.on('SIGINT', () => void stop('SIGINT'));
      process.on('SIGTERM', () => void drain());
    });
  addLlmOptions(command);
  addLlmServerOptions(command);
}

/** The server's LLM budget in words, for its start. */
function llmBudgetWords({ limits }: RunSpend): string {
  return [...(limits.maxCalls === undefined ? [] : [`${limits.maxCalls} calls`]), ...(limits.maxCost === undefined ? [] : [`$${limits.maxCost}`])].join(', ');
}

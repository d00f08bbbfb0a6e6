/**
 * The layers of shared/ and the apps above them: a module imports only from its own folder and
 * from layers below its own. `npm run lint:layers` checks every import (type-only ones too);
 * docs/architecture.md ("Layers") explains the layers. A broken rule prints as
 *   error <rule>: <importing file> → <imported file>
 * followed by the rule's comment (which layer may import what).
 */

/** shared/, bottom first. Folders in the same layer do not import each other. */
const LAYERS = [
  ['engine'],
  ['maps', 'log', 'protocol'],
  ['nav', 'study', 'cb2', 'frames'],
  // The scripted players below the agents: the scripted leader agent is self-play's leader.
  ['selfplay'],
  ['agents'],
  ['eval'],
  ['env', 'dataset'],
];

/** Our own code: what the layer rules look at (npm packages and Node builtins have their own rules). */
const OWN_CODE = '^(shared|server|client|cli|test|bench|tools)/';

const folderPattern = (folders) => `^shared/(${folders.join('|')})/`;
const ALL_FOLDERS = LAYERS.flat();
const levelOf = (folder) => LAYERS.findIndex((folders) => folders.includes(folder));

/** One rule per forbidden pair of folders, so that a violation names both layers. */
const layerRules = ALL_FOLDERS.flatMap((from) =>
  ALL_FOLDERS.filter((to) => to !== from && levelOf(to) >= levelOf(from)).map((to) => {
    const below = LAYERS.slice(0, levelOf(from)).flat();
    const why =
      levelOf(to) === levelOf(from)
        ? `both are in layer ${levelOf(from)}, and folders of one layer do not import each other`
        : `shared/${to} is in layer ${levelOf(to)}, above shared/${from} (layer ${levelOf(from)}): an upward import`;
    return {
      name: `layer-${from}-imports-${to}`,
      severity: 'error',
      comment:
        `shared/${from} must not import shared/${to}: ${why}. shared/${from} imports only from itself` +
        (below.length > 0 ? ` and ${below.map((f) => `shared/${f}`).join(', ')}` : '') +
        '. Move the shared code down a layer, or the importing code up.',
      from: { path: `^shared/${from}/` },
      to: { path: `^shared/${to}/` },
    };
  }),
);

const folderRules = [
  {
    name: 'shared-imports-no-app',
    severity: 'error',
    comment: 'shared/ must not import server/, client/, cli/, test/, bench/ or tools/: they sit above every shared layer.',
    from: { path: '^shared/' },
    to: { path: '^(server|client|cli|test|bench|tools)/' },
  },
  {
    name: 'import-of-shared-module-outside-layers',
    severity: 'error',
    comment: `Every module of shared/ belongs to a layer folder (${ALL_FOLDERS.join(', ')}). Put this one in one, or add its folder to LAYERS in .dependency-cruiser.cjs.`,
    from: {},
    to: { path: '^shared/', pathNot: folderPattern(ALL_FOLDERS) },
  },
  {
    name: 'shared-module-outside-layers',
    severity: 'error',
    comment: `Every module of shared/ belongs to a layer folder (${ALL_FOLDERS.join(', ')}). Put this one in one, or add its folder to LAYERS in .dependency-cruiser.cjs.`,
    from: { path: '^shared/', pathNot: folderPattern(ALL_FOLDERS) },
    to: {},
  },
];

/** Node-only code lives in a folder named node/ (today shared/agents/node/). */
const NODE_ONLY = '(^|/)node/';

module.exports = {
  forbidden: [
    ...layerRules,
    ...folderRules,
    {
      name: 'engine-externals',
      severity: 'error',
      comment: 'shared/engine is the pure rules: besides itself it imports only zod and pure-rand (no Node builtins, no other packages).',
      from: { path: '^shared/engine/' },
      to: { pathNot: [OWN_CODE, '^node_modules/(zod|pure-rand)/'] },
    },
    {
      name: 'shared-node-builtins-only-in-node-folders',
      severity: 'error',
      comment: 'shared/ runs in the browser too: Node builtins (fs, child_process, worker_threads, ...) are for Node-only folders (shared/**/node/).',
      from: { path: '^shared/', pathNot: NODE_ONLY },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'shared-not-into-node-folders',
      severity: 'error',
      comment: 'Browser-safe shared code must not import a Node-only folder (shared/**/node/); only Node code (server/, cli/, other node/ folders) may.',
      from: { path: '^shared/', pathNot: NODE_ONLY },
      to: { path: `^shared/.*${NODE_ONLY}` },
    },
    {
      name: 'client-no-node-folders',
      severity: 'error',
      comment: 'The browser bundle (client/src) must not import a Node-only folder (shared/**/node/): it would pull child_process and the like into the page.',
      from: { path: '^client/src/' },
      to: { path: `^shared/.*${NODE_ONLY}` },
    },
    {
      name: 'client-no-map-generator',
      severity: 'error',
      comment: "The browser bundle (client/src) must not import the map generator: a follower's screen is drawn from its view alone, never rebuilt from a seed.",
      from: { path: '^client/src/' },
      to: { path: '^shared/maps/generate' },
    },
    {
      name: 'client-no-node-builtins',
      severity: 'error',
      comment: 'The browser bundle (client/src) must not import Node builtins (node:fs, child_process, ...).',
      from: { path: '^client/src/' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'client-no-server-packages',
      severity: 'error',
      comment: 'The browser bundle (client/src) must not import server-side packages (Colyseus server, express, ws, better-sqlite3, commander).',
      from: { path: '^client/src/' },
      to: { path: '^node_modules/(better-sqlite3|express|ws|commander|@colyseus/(core|ws-transport|testing|tools))/' },
    },
    {
      name: 'client-imports-shared-only',
      severity: 'error',
      comment: 'client/ imports only itself and shared/ (not server/, cli/, test/ or bench/).',
      from: { path: '^client/' },
      to: { path: OWN_CODE, pathNot: ['^client/', '^shared/'] },
    },
    {
      name: 'server-imports-shared-only',
      severity: 'error',
      comment: 'server/ imports only itself and shared/ (not cli/, client/, test/ or bench/).',
      from: { path: '^server/' },
      to: { path: OWN_CODE, pathNot: ['^server/', '^shared/'] },
    },
    {
      name: 'cli-imports-server-and-shared-only',
      severity: 'error',
      comment: 'cli/ imports itself, server/ (for `serve`) and shared/; not client/, test/ or bench/.',
      from: { path: '^cli/' },
      to: { path: OWN_CODE, pathNot: ['^cli/', '^server/', '^shared/'] },
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A cycle of imports in shared/ (also inside one folder): move what both sides need into a module below them.',
      from: { path: '^shared/' },
      to: { circular: true, viaOnly: { path: '^shared/' } },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that does not resolve to a file: the layer rules cannot check it.',
      from: { path: OWN_CODE },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: ['node_modules'] },
    exclude: { path: ['(^|/)dist/', '^client/dist/'] },
    tsPreCompilationDeps: true,
    detectProcessBuiltinModuleCalls: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.mts', '.cts', '.js', '.mjs', '.cjs', '.json'],
      mainFields: ['main', 'types', 'typings'],
    },
  },
};

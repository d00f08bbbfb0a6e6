/** The CerealBar engine: pure, deterministic, no I/O; runs in Node and in the browser. */
export * from './actions';
export * from './cards';
export * from './config';
export * from './errors';
export * from './hex';
export * from './legal';
export * from './map';
export * from './placement';
export * from './playerView';
export * from './rng';
export * from './snapshot';
export * from './state';
export * from './transition';
export * from './view';

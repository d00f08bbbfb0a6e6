/**
 * The game server: one process serving the game rooms over WebSockets, the HTTP API and (once
 * built) the browser client, with games indexed and logged under a data directory.
 */
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@colyseus/core';
import { WebSocketTransport } from '@colyseus/ws-transport';
import express from 'express';
import { ROOM_NAME } from '../shared/protocol/messages';
import { GameRoom, type RoomServices, type RoomSettings } from './rooms/GameRoom';

export interface GameServerOptions {
  /** 0 picks a free port. */
  readonly port: number;
  readonly host?: string;
  readonly services: RoomServices;
  readonly roomSettings?: RoomSettings;
  /** Adds routes (the HTTP API, the client) to the express app before the server listens. */
  readonly routes?: (app: express.Application) => void;
}

export interface RunningGameServer {
  readonly port: number;
  readonly http: HttpServer;
  /** Ends every game (logged as 'server-shutdown') and stops listening. */
  close(): Promise<void>;
}

export async function startGameServer(options: GameServerOptions): Promise<RunningGameServer> {
  const app = express();
  app.disable('x-powered-by');
  options.routes?.(app);
  const http = createServer(app);
  const colyseus = new Server({ transport: new WebSocketTransport({ server: http }), greet: false, gracefullyShutdown: false });
  colyseus.define(ROOM_NAME, GameRoom, { services: options.services, settings: options.roomSettings }).filterBy(['pool', 'code']);
  await colyseus.listen(options.port, options.host);
  const port = (http.address() as AddressInfo).port;
  return {
    port,
    http,
    close: async () => {
      await colyseus.gracefullyShutdown(false);
    },
  };
}

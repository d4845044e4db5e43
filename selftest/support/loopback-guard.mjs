// Preload for a third-party server the self-tests start (node --import this file):
// - its listening sockets bind 127.0.0.1 only (the Portkey gateway's CLI takes a
//   port but no host, and would listen on every interface);
// - every outbound connection it opens is written to LOOPBACK_GUARD_LOG (one JSON
//   line: host, port), and one to anything but loopback is refused, so a server that
//   phones home (telemetry, a hosted API) is caught and never reaches the network.
import net from 'node:net';
import dgram from 'node:dgram';
import { appendFileSync } from 'node:fs';

const log = process.env.LOOPBACK_GUARD_LOG;
const note = (entry) => { if (log) appendFileSync(log, `${JSON.stringify(entry)}\n`); };
const loopback = (host) => host === undefined || host === 'localhost' || /^127\./.test(host) || host === '::1' || host === '::ffff:127.0.0.1';

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'number' && typeof args[1] !== 'string') args.splice(1, 0, '127.0.0.1');
  else if (args[0] && typeof args[0] === 'object' && args[0].path === undefined && args[0].host === undefined) args[0] = { ...args[0], host: '127.0.0.1' };
  return listen.apply(this, args);
};

const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (...args) {
  const o = Array.isArray(args[0]) ? args[0][0] : args[0];
  const opts = typeof o === 'object' && o !== null ? o : { port: o, host: typeof args[1] === 'string' ? args[1] : undefined };
  if (opts.path === undefined) {
    note({ outbound: `${opts.host ?? 'localhost'}:${opts.port}` });
    if (!loopback(opts.host)) {
      process.nextTick(() => this.destroy(new Error(`loopback-guard: outbound connection to ${opts.host}:${opts.port} refused`)));
      return this;
    }
  }
  return connect.apply(this, args);
};

const createSocket = dgram.createSocket;
dgram.createSocket = function (...args) {
  const socket = createSocket.apply(this, args);
  const send = socket.send;
  socket.send = function (...a) {
    note({ outbound: `udp ${a.find((x) => typeof x === 'string') ?? '?'}` });
    return send.apply(this, a);
  };
  return socket;
};

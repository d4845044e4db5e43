// Real servers from Debian for the staging self-tests: nginx terminating TLS
// in front of the reference, tinyproxy as the corporate forward proxy, and a wiretap
// that records every byte a client sends to the proxy (what the proxy sees). Each is
// started by the test as a child process on 127.0.0.1 with a temporary prefix,
// configuration and log; never a system service. bash .ci/run installs nginx and
// tinyproxy when missing.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

function which(bin: string, paths: string[]): string {
  const found = paths.find((p) => existsSync(p));
  if (!found) throw new Error(`${bin} is not installed: bash .ci/run installs it (apt-get install -y ${bin})`);
  return found;
}

/** Waits until something accepts connections on the port, or the child exits. */
async function listening(port: number, child: ChildProcess, what: string, stderr: () => string): Promise<void> {
  const until = Date.now() + 15_000;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode}: ${stderr()}`);
    const ok = await new Promise<boolean>((r) => {
      const s = connect(port, '127.0.0.1', () => { s.destroy(); r(true); });
      s.on('error', () => r(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`${what} did not listen on 127.0.0.1:${port} within 15 s: ${stderr()}`);
}

function stop(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((r) => {
    const hard = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => { clearTimeout(hard); r(); });
    child.kill(signal);
  });
}

export interface Daemon {
  port: number;
  dir: string;
  /** The daemon's log so far. */
  log(): string;
  close(): Promise<void>;
}

/**
 * nginx on 127.0.0.1 terminating TLS (HTTP/2 offered by ALPN, gzip on, proxy_buffering
 * on, as a staging ingress is often set up) and proxying to `upstream` (http://127.0.0.1:PORT).
 * The access log records protocol, status, gzip ratio and content type per request.
 * `onlyFrom`: answer 403 to connections from any other address (a target reachable only through the proxy).
 * `buffering`: proxy_buffering on or off whatever the upstream's X-Accel-Buffering says (a gateway that ignores it).
 */
export async function startNginx(opts: { upstream: string; cert: string; key: string; onlyFrom?: string; port?: number; buffering?: 'on' | 'off' }): Promise<Daemon> {
  const bin = which('nginx', ['/usr/sbin/nginx', '/usr/bin/nginx']);
  const dir = mkdtempSync(join(tmpdir(), 'chatgate-nginx-'));
  for (const d of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, d), { mode: 0o777 });
  const port = opts.port ?? await freePort();
  const root = process.getuid?.() === 0;
  writeFileSync(join(dir, 'nginx.conf'), `
${root ? 'user root;' : ''}
daemon off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 512; }
http {
  log_format chatgate '$server_protocol $request_method $request_uri $status gzip=$gzip_ratio type=$sent_http_content_type';
  access_log ${dir}/access.log chatgate;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  gzip on;
  gzip_proxied any;
  gzip_min_length 1;
  gzip_types application/json text/event-stream;
  server {
    listen 127.0.0.1:${port} ssl http2;
    server_name localhost;
    ${opts.onlyFrom ? `allow ${opts.onlyFrom}; deny all;` : ''}
    ssl_certificate ${opts.cert};
    ssl_certificate_key ${opts.key};
    # A gateway's body limit above the service's own: an oversize request is refused by the
    # service with its JSON error body (nginx's default 1m answers 413 with an HTML page, which ERR-1 fails).
    client_max_body_size 64m;
    location / {
      proxy_pass ${opts.upstream};
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering ${opts.buffering ?? 'on'};
      ${opts.buffering ? 'proxy_ignore_headers X-Accel-Buffering;' : ''}
      proxy_read_timeout 60s;
    }
  }
}
`);
  let stderr = '';
  const child = spawn(bin, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log')], { stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr!.on('data', (d) => { stderr += d; });
  const errorLog = () => `${stderr}${existsSync(join(dir, 'error.log')) ? readFileSync(join(dir, 'error.log'), 'utf8') : ''}`;
  await listening(port, child, 'nginx', errorLog);
  return {
    port, dir,
    log: () => (existsSync(join(dir, 'access.log')) ? readFileSync(join(dir, 'access.log'), 'utf8') : ''),
    close: async () => { await stop(child, 'SIGTERM'); rmSync(dir, { recursive: true, force: true }); },
  };
}

/** tinyproxy on 127.0.0.1 (Debian's forward proxy), logging every request at Info level; `auth` requires Basic credentials; `bind` is its outgoing address. */
export async function startTinyproxy(opts: { auth?: { user: string; password: string }; bind?: string; port?: number } = {}): Promise<Daemon> {
  const bin = which('tinyproxy', ['/usr/bin/tinyproxy', '/usr/sbin/tinyproxy']);
  const dir = mkdtempSync(join(tmpdir(), 'chatgate-tinyproxy-'));
  const port = opts.port ?? await freePort();
  const logFile = join(dir, 'tinyproxy.log');
  // No ConnectPort line: CONNECT to any port (the tests' servers use random ones).
  writeFileSync(join(dir, 'tinyproxy.conf'), [
    `Port ${port}`, 'Listen 127.0.0.1', 'Timeout 120', `LogFile "${logFile}"`, 'LogLevel Info', 'MaxClients 200',
    ...(opts.auth ? [`BasicAuth ${opts.auth.user} ${opts.auth.password}`] : []),
    // Outgoing connections from this address (127.0.0.2 is loopback too): a target that accepts only it is reachable only through the proxy.
    ...(opts.bind ? [`Bind ${opts.bind}`] : []), '',
  ].join('\n'));
  let stderr = '';
  const child = spawn(bin, ['-d', '-c', join(dir, 'tinyproxy.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr!.on('data', (d) => { stderr += d; });
  const log = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');
  await listening(port, child, 'tinyproxy', () => stderr + log());
  return { port, dir, log, close: async () => { await stop(child, 'SIGTERM'); rmSync(dir, { recursive: true, force: true }); } };
}

export interface Wiretap {
  port: number;
  /** Every byte clients sent through the tap, as latin1 text (what the proxy behind it received). */
  sent(): string;
  close(): Promise<void>;
}

/** A TCP relay to 127.0.0.1:`to` that keeps what clients send: a capture of the proxy's view. */
export async function startWiretap(to: number): Promise<Wiretap> {
  const chunks: Buffer[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(to, '127.0.0.1');
    sockets.add(client); sockets.add(upstream);
    client.on('data', (d: Buffer) => chunks.push(Buffer.from(d)));
    client.pipe(upstream).on('error', () => {});
    upstream.pipe(client).on('error', () => {});
    const end = () => { client.destroy(); upstream.destroy(); sockets.delete(client); sockets.delete(upstream); };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    port: (server.address() as AddressInfo).port,
    sent: () => Buffer.concat(chunks).toString('latin1'),
    close: () => new Promise<void>((r) => { for (const s of sockets) s.destroy(); server.close(() => r()); }),
  };
}

// Certificates for the staging self-tests, made by the test with the
// openssl CLI (bash .ci/run installs it when missing): a private CA, and server
// certificates that are right (localhost), for the wrong host, expired, and self-signed.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Pair { cert: string; key: string }
export interface TestCerts {
  dir: string;
  /** The CA certificate (PEM file): NODE_EXTRA_CA_CERTS. */
  ca: string;
  /** Signed by the CA for localhost and 127.0.0.1, valid now. */
  localhost: Pair;
  /** Signed by the CA, valid now, for another host name only. */
  wrongHost: Pair;
  /** Signed by the CA for localhost, expired in 2020. */
  expired: Pair;
  /** Self-signed for localhost (no CA at all). */
  selfSigned: Pair;
}

function openssl(args: string[], cwd: string): void {
  try {
    execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (err) {
    const e = err as { code?: string; stderr?: Buffer };
    if (e.code === 'ENOENT') throw new Error('openssl is not installed: bash .ci/run installs it (apt-get install -y openssl)');
    throw new Error(`openssl ${args[0]} failed: ${e.stderr?.toString() ?? String(err)}`);
  }
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

export function makeTestCerts(): TestCerts {
  const dir = mkdtempSync(join(tmpdir(), 'chatgate-certs-'));
  openssl(['req', '-x509', ...EC, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=chatgate self-test CA',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'], dir);
  // `openssl ca` (not `x509 -req`): only it sets arbitrary validity dates (the expired certificate).
  writeFileSync(join(dir, 'index.txt'), '');
  writeFileSync(join(dir, 'serial'), '1000\n');
  writeFileSync(join(dir, 'ca.cnf'), [
    '[ca]', 'default_ca = test', '[test]', `dir = ${dir}`, `database = ${dir}/index.txt`, `new_certs_dir = ${dir}`,
    `serial = ${dir}/serial`, 'default_md = sha256', 'policy = any', 'copy_extensions = copy', 'unique_subject = no',
    '[any]', 'commonName = supplied', '',
  ].join('\n'));
  const leaf = (name: string, cn: string, san: string, start: string, end: string): Pair => {
    openssl(['req', '-new', ...EC, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`, '-addext', `subjectAltName=${san}`], dir);
    openssl(['ca', '-batch', '-notext', '-config', 'ca.cnf', '-cert', 'ca.pem', '-keyfile', 'ca.key', '-in', `${name}.csr`, '-out', `${name}.pem`,
      '-startdate', start, '-enddate', end], dir);
    return { cert: join(dir, `${name}.pem`), key: join(dir, `${name}.key`) };
  };
  const day = 24 * 3600 * 1000;
  const stamp = (ms: number) => new Date(ms).toISOString().replace(/[-:T]/g, '').slice(0, 14) + 'Z';
  const from = stamp(Date.now() - day);
  const to = stamp(Date.now() + 2 * day);
  const localhost = leaf('localhost', 'localhost', 'DNS:localhost,IP:127.0.0.1', from, to);
  const wrongHost = leaf('wrong-host', 'other.chatgate.invalid', 'DNS:other.chatgate.invalid', from, to);
  const expired = leaf('expired', 'localhost', 'DNS:localhost,IP:127.0.0.1', '20200101000000Z', '20200102000000Z');
  openssl(['req', '-x509', ...EC, '-keyout', 'self.key', '-out', 'self.pem', '-days', '2', '-subj', '/CN=localhost',
    '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'], dir);
  return { dir, ca: join(dir, 'ca.pem'), localhost, wrongHost, expired, selfSigned: { cert: join(dir, 'self.pem'), key: join(dir, 'self.key') } };
}

export function pem(path: string): string {
  return readFileSync(path, 'utf8');
}

// Start @20minutes/s3rver (checks SigV4 signatures) on 127.0.0.1, a free port,
// serving DIR; print "PORT" on stdout once it listens; stop on SIGTERM.
// Usage: node s3server.js DIR [BUCKET...]   (needs NODE_OPTIONS=--openssl-legacy-provider)
const path = require('path');
const S3rver = require(path.join(__dirname, 'node_modules', '@20minutes', 's3rver'));
const [dir, ...buckets] = process.argv.slice(2);
const server = new S3rver({
  address: '127.0.0.1', port: 0, directory: dir, silent: true,
  configureBuckets: buckets.map((name) => ({ name })),
});
server.run().then((addr) => { process.stdout.write(addr.port + '\n'); })
  .catch((e) => { console.error('s3server: ' + e.message); process.exit(1); });
process.on('SIGTERM', () => server.close().then(() => process.exit(0)));

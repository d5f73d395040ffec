// Run with: npx smc-run node examples/echo-smc.js
// A server and a client in one process; prints whether each end of the connection uses SMC.
const net = require('node:net');
const { getSmcInfo } = require('smc-run');

function describe(side, socket) {
  const info = getSmcInfo(socket);
  const how = { smcd: 'SMC-D', smcr: 'SMC-R', fallback: 'TCP (SMC fell back)', tcp: 'TCP (not an SMC socket)' }[info.mode];
  const why = info.fallback ? `: ${info.fallback.name}, ${info.fallback.description}${info.fallback.fix ? ` (fix: ${info.fallback.fix})` : ''}` : '';
  console.log(`${side}: ${how}${why}`);
}

const server = net.createServer((s) => {
  describe('server', s);
  s.pipe(s);
});
server.listen(0, '127.0.0.1', () => {
  const c = net.connect(server.address().port, '127.0.0.1', () => {
    describe('client', c);
    c.end('hello over SMC\n');
  });
  c.on('data', (d) => process.stdout.write(`echo: ${d}`));
  c.on('close', () => server.close());
});

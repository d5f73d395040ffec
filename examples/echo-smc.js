// Run with: npx smc-run node examples/echo-smc.js
// A server and a client in one process. Each end prints how the kernel says its connection runs
// (getSmcInfo); the last line names the transport the echo took: SMC only when both ends negotiated it.
const net = require('node:net');
const { getSmcInfo } = require('smc-run');

const NAMES = { smcd: 'SMC-D', smcr: 'SMC-R', fallback: 'TCP (SMC fell back)', tcp: 'TCP (not an SMC socket)' };

/** This end's mode and one line about it; without the native addon nothing can be SMC. */
function transport(socket) {
  let info;
  try {
    info = getSmcInfo(socket);
  } catch (err) {
    return { mode: 'tcp', line: `TCP (smc-run cannot ask the kernel: ${err.message})` };
  }
  const f = info.fallback;
  const why = f ? `: ${f.name}, ${f.description}${f.fix ? ` (fix: ${f.fix})` : ''}` : '';
  return { mode: info.mode, line: `${NAMES[info.mode] ?? info.mode}${why}` };
}

let serverEnd;
const server = net.createServer((s) => {
  serverEnd = transport(s);
  console.log(`server: ${serverEnd.line}`);
  s.pipe(s);
});
server.listen(0, '127.0.0.1', () => {
  let clientEnd;
  let echoed = '';
  const c = net.connect(server.address().port, '127.0.0.1', () => {
    clientEnd = transport(c);
    console.log(`client: ${clientEnd.line}`);
    c.end('hello\n');
  });
  c.setEncoding('utf8');
  c.on('data', (d) => (echoed += d));
  c.on('close', () => {
    const both = serverEnd && clientEnd && serverEnd.mode === clientEnd.mode ? serverEnd.mode : undefined;
    const over = both === 'smcd' || both === 'smcr' ? NAMES[both] : 'TCP';
    console.log(`echo over ${over}: ${echoed.trim()}`);
    server.close();
  });
});

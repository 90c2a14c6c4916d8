// Opens N graphql-ws clients (the real npm client, over the ws package) on
// one server, each subscribing to goodsStock(goodsId), and prints one JSON
// line per event on stdout:
//   {"c":3,"at":<ms>,"skus":{"13":87}}     a message: availableStock by SKU id
//   {"c":3,"error":[...]}                  the subscription ended with errors
//   {"ready":N}                            every client got its first message
//   {"closed":N}                           after "close" on stdin, all disposed
// Usage: node watch.mjs URL GOODS_ID N [TOKEN]
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import readline from 'node:readline';

const [url, goodsId, nStr, token] = process.argv.slice(2);
const n = Number(nStr);
const query = `subscription($id: ID!) { goodsStock(goodsId: $id) { goodsId totalStock skus { id stock lockedStock availableStock } selectable { specValueId selectable } } }`;
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');

const clients = [];
let firsts = 0;
for (let c = 0; c < n; c++) {
  const client = createClient({
    url,
    webSocketImpl: WebSocket,
    lazy: false,
    retryAttempts: 0,
    connectionParams: token ? { Authorization: `Bearer ${token}` } : undefined,
    on: { closed: (e) => { if (e && e.code !== 1000 && e.code !== 4499) out({ c, closedCode: e.code, reason: e.reason }); } },
  });
  clients.push(client);
  let first = true;
  client.subscribe({ query, variables: { id: goodsId } }, {
    next: (msg) => {
      if (msg.errors) { out({ c, error: msg.errors }); return; }
      const skus = {};
      for (const s of msg.data.goodsStock.skus) skus[s.id] = s.availableStock;
      out({ c, at: Date.now(), skus });
      if (first) { first = false; if (++firsts === n) out({ ready: n }); }
    },
    error: (err) => out({ c, error: Array.isArray(err) ? err : [{ message: String(err && (err.reason || err.message) || err) }] }),
    complete: () => out({ c, complete: true }),
  });
}

readline.createInterface({ input: process.stdin }).on('line', async (line) => {
  if (line.trim() === 'close') {
    await Promise.all(clients.map((c) => c.dispose()));
    out({ closed: n });
    setTimeout(() => process.exit(0), 100);
  }
});

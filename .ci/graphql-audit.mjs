// The GraphQL-over-HTTP conformance audit of graphql-http (auditServer)
// against a running server: prints every result that is not ok and exits
// 1 on any warning or error (notices are MAYs and only printed).
// Usage: node .ci/graphql-audit.mjs http://127.0.0.1:PORT/graphql
import { auditServer } from 'graphql-http';

const url = process.argv[2];
const results = await auditServer({ url });
const counts = { ok: 0, notice: 0, warn: 0, error: 0 };
for (const r of results) {
  counts[r.status]++;
  if (r.status !== 'ok') console.log(`${r.status.toUpperCase()} ${r.id} ${r.name}: ${r.reason}`);
}
console.log(`graphql-http audit of ${url}: ${counts.ok} ok, ${counts.notice} notices, ${counts.warn} warnings, ${counts.error} errors`);
process.exit(counts.warn + counts.error > 0 ? 1 : 0);

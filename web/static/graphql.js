// The page's only way to the backend: POST /graphql, the public API.

export class APIError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
  // Worth retrying with the same idempotency key: the server may not have
  // finished (or even seen) the request.
  get retryable() {
    return ["NETWORK", "UNAVAILABLE", "IDEMPOTENCY_IN_PROGRESS"].includes(this.code);
  }
}

export async function gql(query, variables, { token, idempotencyKey } = {}) {
  const headers = { "Content-Type": "application/json", Accept: "application/json" };
  if (token) headers.Authorization = "Bearer " + token;
  if (idempotencyKey) headers["Idempotency-Key"] = idempotencyKey;
  let res, body;
  try {
    res = await fetch("/graphql", { method: "POST", headers, body: JSON.stringify({ query, variables }) });
  } catch (e) {
    throw new APIError("NETWORK", "The server could not be reached: " + e.message);
  }
  try {
    body = await res.json();
  } catch {
    // Not GraphQL at all: a proxy's 502 (worth a retry) or a limit such as 413.
    throw new APIError(res.status >= 500 ? "NETWORK" : "INTERNAL", `HTTP ${res.status} without a GraphQL body`);
  }
  if (body.errors && body.errors.length) {
    const e = body.errors[0];
    throw new APIError((e.extensions && e.extensions.code) || "INTERNAL", e.message);
  }
  if (!res.ok) throw new APIError("NETWORK", `HTTP ${res.status}`);
  return body.data;
}

// A fresh key per purchase intent. getRandomValues, not randomUUID: the
// latter only exists in secure contexts and the demo may run on plain http
// on a LAN address.
export function newIdempotencyKey() {
  const b = crypto.getRandomValues(new Uint8Array(16));
  return "shop-" + Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

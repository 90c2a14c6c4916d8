// The console's only way to the backend: POST /graphql on this server, the
// admin API every other client uses. The token goes in the Authorization
// header of same-origin requests only: never into a URL, a log or storage
// that outlives the tab.

export class APIError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

export async function gql(token, query, variables) {
  const headers = { "Content-Type": "application/json", Accept: "application/json" };
  if (token) headers.Authorization = "Bearer " + token;
  let res, body;
  try {
    // A path, not a URL: the request can only go to the server that served the page.
    res = await fetch("/graphql", {
      method: "POST", headers, body: JSON.stringify({ query, variables }),
      credentials: "omit", referrerPolicy: "no-referrer", cache: "no-store",
    });
  } catch (e) {
    throw new APIError("NETWORK", "The server could not be reached: " + e.message);
  }
  try {
    body = await res.json();
  } catch {
    throw new APIError(res.status === 429 ? "RATE_LIMITED" : "INTERNAL", `HTTP ${res.status} without a GraphQL body`);
  }
  if (body.errors && body.errors.length) {
    const e = body.errors[0];
    throw new APIError((e.extensions && e.extensions.code) || "INTERNAL", e.message);
  }
  if (!res.ok) throw new APIError("NETWORK", `HTTP ${res.status}`);
  return body.data;
}

// A per-attempt business number for adjustStock: the same number on the
// same SKU applies once, so a retry after a lost answer cannot add twice.
export function newBizSn() {
  const b = crypto.getRandomValues(new Uint8Array(8));
  return "console-" + Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

-- placeOrder of one unit of the hot SKU, each request with its own
-- Idempotency-Key and one of the tokens in $TOKENS (one per line), round robin,
-- so that no token subject meets serve's per-account rate limit.
local body = os.getenv("BODY")
local tokens = {}
for line in io.lines(os.getenv("TOKENS")) do tokens[#tokens + 1] = line end
local threads = {}
n = 0
tid = 0
function setup(thread)
  n = n + 1
  thread:set("tid", n)
  table.insert(threads, thread)
end
bad = 0
function request()
  n = n + 1
  local t = tokens[(n % #tokens) + 1]
  return wrk.format("POST", "/graphql", {["Content-Type"] = "application/json",
    ["Authorization"] = "Bearer " .. t, ["Idempotency-Key"] = os.getenv("RUN") .. "-" .. tid .. "-" .. n}, body)
end
function response(status, headers, b)
  if status ~= 200 or not string.find(b, "orderSn", 1, true) or string.find(b, '"errors"', 1, true) then
    bad = bad + 1
    if bad == 1 then io.stderr:write(status .. " " .. b .. "\n") end
  end
end
function done(summary, latency, requests)
  local total = 0
  for _, t in ipairs(threads) do total = total + t:get("bad") end
  io.write(string.format("BAD %d\n", total))
end

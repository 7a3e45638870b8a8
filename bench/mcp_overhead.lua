-- wrk script of bench/mcp_overhead.sh: one request, repeated.
-- Environment: MCP_BENCH_METHOD (GET or POST), MCP_BENCH_BODY (the POST body),
-- MCP_BENCH_EXPECT (a substring every answer must contain, e.g. "isError":false).
-- The headers come from wrk's -H flags.
-- Every answer is checked: status 200 and the expected substring. The same
-- check runs for the REST and the MCP cases, so both pay the same client cost.
-- done() prints one line:
--   RESULT requests seconds p50_ms p99_ms max_ms non_2xx socket_errors checked unexpected
local threads = {}

wrk.method = os.getenv("MCP_BENCH_METHOD") or "GET"
local body = os.getenv("MCP_BENCH_BODY")
if body and body ~= "" then wrk.body = body end

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  expect = os.getenv("MCP_BENCH_EXPECT") or ""
  checked = 0
  unexpected = 0
end

function response(status, headers, body)
  checked = checked + 1
  if status ~= 200 or (expect ~= "" and not string.find(body, expect, 1, true)) then
    unexpected = unexpected + 1
  end
end

function done(summary, latency, requests)
  local c, u = 0, 0
  for _, t in ipairs(threads) do
    c = c + t:get("checked")
    u = u + t:get("unexpected")
  end
  local e = summary.errors
  io.write(string.format("RESULT %d %.3f %.3f %.3f %.3f %d %d %d %d\n", summary.requests,
    summary.duration / 1e6, latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    latency.max / 1000, e.status, e.connect + e.read + e.write + e.timeout, c, u))
end

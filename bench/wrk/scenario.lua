-- wrk script for the toolreg benchmarks. BENCH_SCENARIO selects the requests:
--   static    the URL given to wrk, unchanged (the default)
--   metadata  GET /api/v1/tools/bench-tool-NNNNNN for a random tool of BENCH_N
--   download  GET /api/v1/tools/bench-tool-NNNNNN/1.0.0/download, a random tool of BENCH_N
--   search    GET /api/v1/search?q=WORD for a random word of the file BENCH_WORDS
-- done() prints one line `BENCH_JSON {...}` that bench.py reads.
local scenario = os.getenv("BENCH_SCENARIO") or "static"
local n = tonumber(os.getenv("BENCH_N") or "1")
local words = {}

function init(args)
  math.randomseed(os.time() + (tonumber(tostring({}):match("0x(%x+)") or "0", 16) % 100000))
  local file = os.getenv("BENCH_WORDS")
  if file then
    for line in io.lines(file) do
      if #line > 0 then words[#words + 1] = line end
    end
  end
end

if scenario == "metadata" then
  request = function()
    return wrk.format("GET", string.format("/api/v1/tools/bench-tool-%06d", math.random(0, n - 1)))
  end
elseif scenario == "download" then
  request = function()
    return wrk.format("GET", string.format("/api/v1/tools/bench-tool-%06d/1.0.0/download", math.random(0, n - 1)))
  end
elseif scenario == "search" then
  request = function()
    return wrk.format("GET", "/api/v1/search?per_page=10&q=" .. words[math.random(1, #words)])
  end
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests": %d, "duration_us": %d, "bytes": %d, "connect": %d, "read": %d, "write": %d, "status": %d, "timeout": %d, "p50_us": %d, "p99_us": %d, "mean_us": %.1f}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99), latency.mean))
end

-- wrk script for bench/http_bench.sh: sends the api-secret header (IMAGO_SECRET) with the method
-- given in WRK_METHOD, and prints one machine-readable RESULT line when the run is done.
local secret = os.getenv("IMAGO_SECRET")
wrk.method = os.getenv("WRK_METHOD") or "GET"
if secret ~= nil and secret ~= "" then
  wrk.headers["api-secret"] = secret
end

function done(summary, latency, requests)
  local e = summary.errors
  local secs = summary.duration / 1e6
  io.write(string.format(
    "RESULT requests=%d rps=%.1f p50_us=%d p99_us=%d max_us=%d non2xx=%d connect=%d read=%d write=%d timeout=%d\n",
    summary.requests, summary.requests / secs, latency:percentile(50), latency:percentile(99), latency.max,
    e.status, e.connect, e.read, e.write, e.timeout))
end

-- wrk script for scripts/bench-decide's cross-check: POST /flags/?v=2 for a random one of the persons the
-- benchmark loaded (bench-person-0 .. bench-person-(N-1)), as DecideBenchmark sends them.
-- Environment: EDDY_WRK_TOKEN (the project API key), EDDY_WRK_PERSONS (N).
local token = os.getenv("EDDY_WRK_TOKEN")
local persons = tonumber(os.getenv("EDDY_WRK_PERSONS") or "100000")

wrk.method = "POST"
wrk.path = "/flags/?v=2"
wrk.headers["Content-Type"] = "application/json"

function setup(thread)
  thread:set("seed", math.random(1, 1000000))
end

function init(args)
  math.randomseed(seed)
end

request = function()
  local person = math.random(0, persons - 1)
  return wrk.format(nil, nil, nil, '{"token":"' .. token .. '","distinct_id":"bench-person-' .. person .. '"}')
end

-- Non-2xx answers are counted by wrk ("Non-2xx or 3xx responses"); a run with any is not a measurement.

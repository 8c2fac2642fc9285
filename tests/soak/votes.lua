-- votes.lua - wrk script of the soak: thread 1 sends legitimate votes
-- (valid token, same-origin Origin), every other thread forged ones that
-- cycle through four attacks: no token, a wrong token, the attacker's
-- Origin (with the valid token) and Sec-Fetch-Site: cross-site (with the
-- valid token). A thread sends one kind only, so every response can be
-- attributed. In the last SOAK_TAIL seconds every thread switches to a
-- harmless GET, so no vote is still in flight when wrk stops and the
-- accepted votes can be compared exactly with the database. The first
-- SOAK_PRIME seconds send that GET too: every kind of request the run
-- makes has run before soak.sh takes the RSS it compares the end with,
-- so the tail's burst of fast GETs (several times the votes' rate) is
-- not read as growth.
--
-- Environment: SOAK_COOKIE (the session cookie header value), SOAK_PARAM,
-- SOAK_TOKEN (from the page's meta tags), SOAK_SELF, SOAK_ATTACKER
-- (origins), SOAK_SECONDS, SOAK_TAIL, SOAK_PRIME, SOAK_RESULT (file for
-- the counts).
-- Nothing secret is ever printed: only counts go to SOAK_RESULT.

local cookie = os.getenv("SOAK_COOKIE")
local param = os.getenv("SOAK_PARAM")
local token = os.getenv("SOAK_TOKEN")
local self_origin = os.getenv("SOAK_SELF")
local attacker = os.getenv("SOAK_ATTACKER")
local seconds = tonumber(os.getenv("SOAK_SECONDS") or "60")
local tail = tonumber(os.getenv("SOAK_TAIL") or "3")
local prime = tonumber(os.getenv("SOAK_PRIME") or "0")
local result_file = os.getenv("SOAK_RESULT")

local threads = {}
local next_id = 0

function setup(thread)
	thread:set("id", next_id)
	next_id = next_id + 1
	table.insert(threads, thread)
end

-- a token of the right shape that no key signed: flip its first character
local function wrong_token(t)
	local c = t:sub(1, 1)
	local r = (c == "A") and "B" or "A"
	return r .. t:sub(2)
end

function init(args)
	deadline = os.time() + seconds - tail
	primed = os.time() + prime
	sent = { legit = 0, no_token = 0, wrong_token = 0, attacker_origin = 0, cross_site = 0, tail = 0 }
	status = {}
	votes_done = 0
	local base = { ["Content-Type"] = "application/x-www-form-urlencoded", ["Cookie"] = cookie }
	local function hdrs(extra)
		local h = {}
		for k, v in pairs(base) do h[k] = v end
		for k, v in pairs(extra) do h[k] = v end
		return h
	end
	local story = (id % 3) + 1
	local good = "story=" .. story .. "&type=y&" .. param .. "=" .. token
	reqs = {
		legit = wrk.format("POST", "/vote", hdrs({ Origin = self_origin }), good),
		no_token = wrk.format("POST", "/vote", hdrs({ Origin = self_origin }), "story=1&type=y"),
		wrong_token = wrk.format("POST", "/vote", hdrs({ Origin = self_origin }),
			"story=1&type=y&" .. param .. "=" .. wrong_token(token)),
		attacker_origin = wrk.format("POST", "/vote", hdrs({ Origin = attacker }), good),
		cross_site = wrk.format("POST", "/vote", hdrs({ ["Sec-Fetch-Site"] = "cross-site" }), good),
		tail = wrk.format("GET", "/style.css", { Cookie = cookie }),
	}
	forged_kinds = { "no_token", "wrong_token", "attacker_origin", "cross_site" }
	n = 0
end

function request()
	local kind
	if os.time() >= deadline or os.time() < primed then
		kind = "tail"
	elseif id == 0 then
		kind = "legit"
	else
		n = n + 1
		kind = forged_kinds[(n % #forged_kinds) + 1]
	end
	sent[kind] = sent[kind] + 1
	return reqs[kind]
end

function response(st, headers, body)
	status[st] = (status[st] or 0) + 1
end

function done(summary, latency, requests)
	local f = assert(io.open(result_file, "w"))
	local legit = {}
	local forged = {}
	local sent_total = {}
	for _, t in ipairs(threads) do
		local tid = t:get("id")
		local st = t:get("status")
		local s = t:get("sent")
		local into = (tid == 0) and legit or forged
		for code, c in pairs(st) do
			into[code] = (into[code] or 0) + c
		end
		for k, c in pairs(s) do
			sent_total[k] = (sent_total[k] or 0) + c
		end
	end
	for code, c in pairs(legit) do f:write(string.format("legit_status_%d=%d\n", code, c)) end
	for code, c in pairs(forged) do f:write(string.format("forged_status_%d=%d\n", code, c)) end
	for k, c in pairs(sent_total) do f:write(string.format("sent_%s=%d\n", k, c)) end
	f:write(string.format("requests=%d\n", summary.requests))
	f:write(string.format("duration_us=%d\n", summary.duration))
	f:write(string.format("err_connect=%d\nerr_read=%d\nerr_write=%d\nerr_status=%d\nerr_timeout=%d\n",
		summary.errors.connect, summary.errors.read, summary.errors.write, summary.errors.status,
		summary.errors.timeout))
	f:write(string.format("latency_max_us=%d\n", latency.max))
	f:write(string.format("latency_p99_us=%d\n", latency:percentile(99)))
	f:write(string.format("latency_mean_us=%d\n", math.floor(latency.mean)))
	f:close()
end

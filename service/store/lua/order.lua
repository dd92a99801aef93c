-- The fast order intake (service/http/fastpath.py), in one atomic step: everything the
-- web process checked against its per-process caches is checked again here against the
-- store, then the order is stored exactly as submit.lua stores it. Any doubt answers
-- {'refused'} and changes nothing: the caller then takes the full path (intake.lua,
-- then submit.lua), which finds the same refusal and names it.
-- Checked: the token's kid still holds this seat, with the very public key the token
-- verified with (a replaced key stops working at once); the game is started and not
-- over, of the title whose rules validated the order; the step is the open one, still
-- collecting, and asks this seat, with the state version the order was validated
-- against (an action, act.lua, bumps it); the token's iat (and exp) are inside the bounds on
-- the server clock, compared in the very expressions of `_check_time` in
-- service/core/auth.py (iat and exp are whole numbers below 2^53, exact as doubles);
-- its one-time id is unused in this step (a token binds its step, and a closed step
-- never opens again, so the commit drops the step's ids).
-- The record is the text of service/core/records.py `order_record` split at its time
-- stamp (`order_record_around_time`): this script only fills in the stamp, formatted
-- as records.stamp formats it ('%.6f'), so both paths store the same bytes.
-- KEYS: keys, seats, meta, phase, orders of the step, the step's one-time ids (SET)
-- ARGV: 1 kid  2 seat  3 public key (x)  4 title  5 phase id
--       6 iat  7 exp ('' for none)  8 clock skew  9 order max age  10 one-time id TTL
--       11 record JSON up to the time stamp  12 record JSON after it  13 one-time id
--       14 the state version the order was validated against
--       15 '1': a flip answers what resolving the step reads but the state (the caller
--          holds the state of version ARGV[14], checked here), as resolve_read.lua does:
--          then 5 meta, 6 the step's hash (after the flip), 7 its orders (flat lists)
-- Answers {'stored' or 'trigger', replaced 0/1, TIME seconds, TIME microseconds}; a
-- paused step (`paused_at`, pause.lua) stores the last order without flipping ('stored'):
-- the host's resume flips it (resume.lua).
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return {'refused'} end
local rec = redis.call('HGET', KEYS[2], ARGV[2])
if not rec then return {'refused'} end
rec = cjson.decode(rec)
if type(rec) ~= 'table' or rec.kid ~= ARGV[1] or rec.public_key ~= ARGV[3] then return {'refused'} end
local meta = redis.call('HMGET', KEYS[3], 'status', 'title')
if not meta[1] or meta[1] == 'lobby' or meta[1] == 'finished' or meta[2] ~= ARGV[4] then
  return {'refused'}
end
local ph = redis.call('HMGET', KEYS[4], 'id', 'status', 'expected', 'v', 'paused_at')
if ph[1] ~= ARGV[5] or ph[2] ~= 'collecting' or not ph[3] or (ph[4] or '0') ~= ARGV[14] then
  return {'refused'}
end
local expected = cjson.decode(ph[3])
local wanted = false
for _, s in ipairs(expected) do
  if tostring(s) == ARGV[2] then wanted = true end
end
if not wanted then return {'refused'} end
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local iat = tonumber(ARGV[6])
if iat > now + tonumber(ARGV[8]) or iat < now - tonumber(ARGV[9]) then return {'refused'} end
if ARGV[7] ~= '' and tonumber(ARGV[7]) <= now - tonumber(ARGV[8]) then return {'refused'} end
if redis.call('SADD', KEYS[6], ARGV[13]) == 0 then return {'refused'} end
redis.call('EXPIRE', KEYS[6], ARGV[10])
local replaced = 0
local record = ARGV[11] .. string.format('%.6f', now) .. ARGV[12]
if redis.call('HSET', KEYS[5], ARGV[2], record) == 0 then replaced = 1 end
if redis.call('HLEN', KEYS[5]) >= #expected and (not ph[5] or ph[5] == '') then
  redis.call('HSET', KEYS[4], 'status', 'resolving',
    'flipped_at', string.format('%d.%06d', tonumber(t[1]), tonumber(t[2])))
  redis.call('SPUBLISH', (string.gsub(KEYS[4], ':phase$', ':live')), 'resolving ' .. ph[1])
  if ARGV[15] == '1' then
    return {'trigger', replaced, t[1], t[2], redis.call('HGETALL', KEYS[3]), redis.call('HGETALL', KEYS[4]),
            redis.call('HGETALL', KEYS[5])}
  end
  return {'trigger', replaced, t[1], t[2]}
end
return {'stored', replaced, t[1], t[2]}

-- The host resumes a paused game (`service.core.hosting`), in one atomic step on the
-- store's clock: the open step's deadline moves on by exactly the time it was paused
-- (now - paused_at, both the store's TIME), the pause [paused_at, now] is appended to
-- the step's `pauses` (JSON list of [start, end]), `paused_at` is cleared; and when
-- every asked seat has answered meanwhile (the last order of a paused step is stored but
-- does not flip it), the step flips to `resolving` here, exactly once.
-- KEYS: meta, phase, orders of the step
-- ARGV: 1 the step id as read
-- Answers {'ok', step id, new deadline, shift (seconds), paused_at, now, 'trigger' or
-- 'collecting'}, {'not_paused', step id}, {'stale', step id} (another step is open),
-- or the game's status ({'no_game'}, {'lobby'}, {'finished'}).
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {'no_game'} end
if status ~= 'running' then return {status} end
local ph = redis.call('HMGET', KEYS[2], 'id', 'status', 'deadline', 'paused_at', 'pauses', 'expected')
if not ph[1] or ph[2] == 'finished' then return {'finished'} end
if ph[1] ~= ARGV[1] then return {'stale', ph[1]} end
if not ph[4] or ph[4] == '' then return {'not_paused', ph[1]} end
-- In whole microseconds (exact in a double up to 2^53), so that the new deadline is
-- the old one plus the span paused to the microsecond, as the stored times say.
local function micro(text)
  local s, f = string.match(text, '^(%d+)%.?(%d*)$')
  f = string.sub(f .. '000000', 1, 6)
  return tonumber(s) * 1000000 + tonumber(f)
end
local function text(us)
  return string.format('%d.%06d', math.floor(us / 1000000), us % 1000000)
end
local t = redis.call('TIME')
local stamp = string.format('%d.%06d', tonumber(t[1]), tonumber(t[2]))
local shift = math.max(0, micro(stamp) - micro(ph[4]))
local deadline = text(micro(ph[3]) + shift)
local pauses = ph[5]
if not pauses or pauses == '' or pauses == '[]' then
  pauses = '[[' .. ph[4] .. ',' .. stamp .. ']]'
else
  pauses = string.sub(pauses, 1, -2) .. ',[' .. ph[4] .. ',' .. stamp .. ']]'
end
redis.call('HSET', KEYS[2], 'deadline', deadline, 'paused_at', '', 'pauses', pauses)
local live = (string.gsub(KEYS[2], ':phase$', ':live'))
local flip = 'collecting'
if ph[2] == 'collecting' and redis.call('HLEN', KEYS[3]) >= #cjson.decode(ph[6]) then
  redis.call('HSET', KEYS[2], 'status', 'resolving', 'flipped_at', stamp)
  redis.call('SPUBLISH', live, 'resolving ' .. ph[1])
  flip = 'trigger'
else
  redis.call('SPUBLISH', live, 'deadline ' .. ph[1])
end
return {'ok', ph[1], deadline, text(shift), ph[4], stamp, flip}

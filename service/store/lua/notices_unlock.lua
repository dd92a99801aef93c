-- Let go of a game's notices lock (`Effects.lock_notices`) if this holder still has it,
-- and answer what is left to tell, in the same atomic step: {event_seq, notified_through}.
-- A job that found the lock taken left its events to the holder, so the holder looks
-- again after letting go (no event is left behind between the two).
-- The holder's last notices made may move the mark first (ARGV 2), as notified.lua
-- moves it (never back, nor past the last event): the mark and the lock in one call.
-- KEYS: the lock, meta
-- ARGV: 1 the holder's token; 2 (optional) the event number the notices are made through
if ARGV[2] and ARGV[2] ~= '' then
  local mark = tonumber(redis.call('HGET', KEYS[2], 'notified_through') or '0')
  local target = math.min(tonumber(ARGV[2]), tonumber(redis.call('HGET', KEYS[2], 'event_seq') or '0'))
  if target > mark then redis.call('HSET', KEYS[2], 'notified_through', tostring(target)) end
end
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
local m = redis.call('HMGET', KEYS[2], 'event_seq', 'notified_through')
return {m[1] or '0', m[2] or m[1] or '0'}
